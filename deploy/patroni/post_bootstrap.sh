#!/bin/sh
# Patroni runs this once, on the new cluster's primary: the platform's database.
set -e
psql -X -v ON_ERROR_STOP=1 -d "$1" -c 'CREATE DATABASE platform'
# the pgBackRest stanza, so that archive_command succeeds from the first segment
pgbackrest --stanza=platform stanza-create
