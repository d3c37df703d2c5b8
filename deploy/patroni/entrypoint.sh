#!/bin/sh
# The Patroni member (docker-compose.yml): with PATRONI_METRICS_LISTEN set,
# metrics_proxy.py serves Patroni's GET /metrics there, on the metrics
# network, restarted if it exits; then Patroni itself.
set -eu
if [ -n "${PATRONI_METRICS_LISTEN:-}" ]; then
  (while :; do python3 /etc/patroni/metrics_proxy.py || true; sleep 1; done) &
fi
exec patroni /etc/patroni/patroni.yml
