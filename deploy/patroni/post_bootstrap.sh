#!/bin/sh
# Patroni runs this once, on the new cluster's primary: the platform's
# database and its two roles (roles.sql; passwords from the environment).
set -e
: "${PLATFORM_DB_PASSWORD:?PLATFORM_DB_PASSWORD is required}"
: "${MIGRATE_DB_PASSWORD:?MIGRATE_DB_PASSWORD is required}"
psql -X -q -v ON_ERROR_STOP=1 -v owner_password="$MIGRATE_DB_PASSWORD" -v app_password="$PLATFORM_DB_PASSWORD" \
  -f /etc/patroni/roles.sql -d "$1"
# the pgBackRest stanza, so that archive_command succeeds from the first segment
pgbackrest --stanza=platform stanza-create
