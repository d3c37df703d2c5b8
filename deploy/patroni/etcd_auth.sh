#!/bin/sh
# docker-compose.yml's etcd-auth: root and a patroni user that may touch
# only Patroni's keys (/service/), then authentication on. Idempotent: an
# anonymous read fails once it is on (the same steps as deploy/local/cluster.sh).
set -eu
: "${ETCD_ROOT_PASSWORD:?ETCD_ROOT_PASSWORD is required}"
: "${ETCD_PATRONI_PASSWORD:?ETCD_PATRONI_PASSWORD is required}"
export ETCDCTL_API=3 ETCDCTL_ENDPOINTS="${ETCDCTL_ENDPOINTS:-http://etcd:2379}"
if ! etcdctl get /auth-probe >/dev/null 2>&1; then
  echo "etcd: authentication is on"
  exit 0
fi
etcdctl user get root >/dev/null 2>&1 || etcdctl user add root --new-user-password="$ETCD_ROOT_PASSWORD" --interactive=false
etcdctl role get patroni >/dev/null 2>&1 || etcdctl role add patroni
etcdctl role grant-permission patroni --prefix=true readwrite /service/
etcdctl user get patroni >/dev/null 2>&1 || etcdctl user add patroni --new-user-password="$ETCD_PATRONI_PASSWORD" --interactive=false
etcdctl user get patroni | grep -q '^Roles:.* patroni' || etcdctl user grant-role patroni patroni
etcdctl auth enable
if etcdctl get /auth-probe >/dev/null 2>&1; then
  echo "etcd: authentication is still off" >&2
  exit 1
fi
echo "etcd: authentication turned on"
