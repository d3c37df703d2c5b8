#!/bin/sh
# The Patroni member (docker-compose.yml): with PATRONI_METRICS_LISTEN set,
# metrics_proxy.py serves Patroni's GET /metrics there, on the metrics
# network, restarted if it exits; then Patroni itself.
set -eu
if [ -n "${PATRONI_METRICS_LISTEN:-}" ]; then
  (while :; do python3 /etc/patroni/metrics_proxy.py || true; sleep 1; done) &
fi
# Debian's Patroni with upstream's fix of its rewind check (the script says which)
exec /usr/bin/python3 /etc/patroni/patroni_run.py /etc/patroni/patroni.yml
