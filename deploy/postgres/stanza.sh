#!/bin/sh
# Runs once, when the data volume is initialised (the image's entrypoint
# runs /docker-entrypoint-initdb.d with a temporary server): creates the
# pgBackRest stanza so that archive_command succeeds from the first segment.
set -e
pgbackrest --stanza=platform stanza-create
