#!/usr/bin/env bash
# Local cluster: the production shape on one machine, from Debian packages.
#
#   etcd (one member: one machine has no quorum to gain from three)
#   Patroni x2 managing PostgreSQL primary + synchronous standby
#   the embedded Kafka-protocol broker as its own process (`platform broker`;
#     one broker, no replication: the one part that is not redundant)
#   platform gateway x2 behind HAProxy (HTTP health checks)
#   platform consume <group> x2 for every consumer group
#   platform relay x2 (one publishes: it holds the relay's advisory lock)
#   ClickHouse: the one of the local stack (CLICKHOUSE_ADDR)
#
#   deploy/local/cluster.sh up       install if missing, start what is not running (idempotent)
#   deploy/local/cluster.sh down     stop everything (idempotent)
#   deploy/local/cluster.sh status   each member, its pid and health; Patroni leader, replica, sync state
#   deploy/local/cluster.sh env      export lines for clients (API URL, DATABASE_URL, KAFKA_BROKERS)
#   deploy/local/cluster.sh install  only install the Debian packages it needs
#   deploy/local/cluster.sh addrs    each member's own loopback address (NAME ADDR lines)
#   deploy/local/cluster.sh fault ... cut a link, delay or drop on Postgres (see fault_usage)
#
# The platform connects to Postgres with a multi-host DSN and
# target_session_attrs=read-write: after a failover its new connections find
# the new primary, with no restart.
#
# Nobody else on the machine drives it (issue 45): etcd wants a password
# (Patroni's user may touch only its keys), Patroni's REST API wants one for
# every change (PATCH /config, /restart, /switchover, ...), Postgres wants
# scram-sha-256 from everyone (the platform as platform_app, migrations as
# platform_owner: deploy/patroni/roles.sql), and HAProxy reaches the
# gateways from its own loopback address (CLUSTER_PROXY_SOURCE), the only
# one whose X-Forwarded-For they believe. The passwords are generated into
# $CLUSTER_DIR/cluster-auth.env (mode 600); `env` prints what clients need.
#
# Environment (all optional):
#   CLUSTER_DIR        default <repo>/.cluster (made absolute); data, logs, pids
#   CLUSTER_PORT_BASE  default 56100; the cluster uses the 30 ports from it
#   CLICKHOUSE_ADDR    default 127.0.0.1:19000
#   CLICKHOUSE_DATABASE default platform_cluster
#   PLATFORM_BIN       default <repo>/bin/platform (built by `make build`)
#   CLUSTER_ENV_FILE   default $CLUSTER_DIR/platform.env: extra KEY=VALUE lines
#                      every platform process gets (e.g. admin e-mails)
#   CLUSTER_PROXY_SOURCE default 127.0.1.1: the loopback address HAProxy
#                      connects to the gateways from (their TRUSTED_PROXIES)
#   CLUSTER_NET        default 127.0.2: the members' own loopback addresses
#                      are CLUSTER_NET.N (see addr_layout)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd -P)"
LOG_TAG=cluster
# shellcheck source=deploy/local/lib.sh
. "$SCRIPT_DIR/lib.sh"

DIR="${CLUSTER_DIR:-$REPO_ROOT/.cluster}"
case "$DIR" in /*) ;; *) DIR="$PWD/$DIR" ;; esac
BASE="${CLUSTER_PORT_BASE:-56100}"
case "$BASE" in ''|*[!0-9]*) die "CLUSTER_PORT_BASE '$BASE' is not a number" ;; esac
[ "$BASE" -ge 1024 ] && [ "$BASE" -le 65500 ] || die "CLUSTER_PORT_BASE $BASE out of range"
CH_ADDR="${CLICKHOUSE_ADDR:-127.0.0.1:19000}"
CH_DB="${CLICKHOUSE_DATABASE:-platform_cluster}"
BIN="${PLATFORM_BIN:-$REPO_ROOT/bin/platform}"
ENV_FILE="${CLUSTER_ENV_FILE:-$DIR/platform.env}"
SCOPE="platform-cluster-$BASE"
PROXY_SOURCE="${CLUSTER_PROXY_SOURCE:-127.0.1.1}"
case "$PROXY_SOURCE" in 127.0.0.1|127.*.*.*) ;; *) die "CLUSTER_PROXY_SOURCE '$PROXY_SOURCE' is not a loopback address" ;; esac
[ "$PROXY_SOURCE" != 127.0.0.1 ] || die "CLUSTER_PROXY_SOURCE must not be 127.0.0.1, the address every local client shares"

# Ports, from BASE.
ETCD_CLIENT=$BASE;            ETCD_PEER=$((BASE + 1))
PG_PORTS=($((BASE + 2)) $((BASE + 3)))
REST_PORTS=($((BASE + 4)) $((BASE + 5)))
PROXY_PORT=$((BASE + 6));     STATS_PORT=$((BASE + 7))
BROKER_PORT=$((BASE + 8))
GW_PORTS=($((BASE + 10)) $((BASE + 11)))
# metrics listeners: BASE+12 onwards, one per platform process (see members)

# ---------------------------------------------------------------- addresses

# addr_layout: every member has its own loopback address, so that a fault can
# cut or slow one link (iptables, tc netem on lo) and leave the others. The
# whole 127.0.0.0/8 is local on Linux's lo: nothing to configure.
#   etcd listens on 127.0.0.1 and on one address per Patroni member
#     (ETCD_ADDRS[i], the only one member i knows: use_proxies, no discovery)
#   Postgres member i listens on 127.0.0.1 (clients, Patroni's own
#     connections) and on PG_ADDRS[i], its connect_address: the one its
#     standby replicates from and pg_rewind reaches
#   each platform process connects to Postgres and the broker from its own
#     address (PLATFORM_SOURCE_ADDR): CLUSTER_NET.(100 + its place in members)
# Other clusters on the machine use other ports: a fault names its ports.
CLUSTER_NET="${CLUSTER_NET:-127.0.2}"
addr_layout() {
  [[ "$CLUSTER_NET" =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || die "CLUSTER_NET '$CLUSTER_NET' is not 127.X.Y"
  [ "$CLUSTER_NET" != 127.0.0 ] || die "CLUSTER_NET must not be 127.0.0 (127.0.0.1 is everyone's)"
  ETCD_ADDRS=("$CLUSTER_NET.11" "$CLUSTER_NET.12")
  PG_ADDRS=("$CLUSTER_NET.21" "$CLUSTER_NET.22")
}

# member_addr NAME: the source address of platform process NAME
member_addr() {
  local i=0 n rest
  while read -r n rest; do
    [ "$n" = "$1" ] && { echo "$CLUSTER_NET.$((100 + i))"; return 0; }
    i=$((i + 1))
  done < <(members)
  return 1
}

print_addrs() {
  local n rest
  echo "etcd@patroni-1 ${ETCD_ADDRS[0]} $ETCD_CLIENT"
  echo "etcd@patroni-2 ${ETCD_ADDRS[1]} $ETCD_CLIENT"
  echo "pg-1 ${PG_ADDRS[0]} ${PG_PORTS[0]}"
  echo "pg-2 ${PG_ADDRS[1]} ${PG_PORTS[1]}"
  echo "broker 127.0.0.1 $BROKER_PORT"
  while read -r n rest; do echo "$n $(member_addr "$n") -"; done < <(members)
}

GROUPS_ALL=(fiat-applier mask-applier reputation-applier ledger-appender trade-applier webhook-dispatcher clickhouse-sink)

RUN="$DIR/run"
LOGS="$DIR/log"
PG_ROOT="$DIR/pg"            # the postgres user owns what is under it

ROLES_SQL="$REPO_ROOT/deploy/patroni/roles.sql"
EVENT_LOG_SQL="$REPO_ROOT/deploy/patroni/event_log_owner.sql"
AUTH_FILE="$DIR/cluster-auth.env"

# ---------------------------------------------------------------- passwords

# auth_load [create]: the cluster's passwords (generated on the first 'up'),
# and the DSNs built from them. A cluster made before it had passwords (its
# Postgres trusts every local user) cannot be converted in place.
auth_load() {
  if [ ! -f "$AUTH_FILE" ] && [ "${1:-}" = create ]; then
    [ ! -d "$DIR/pg/data1" ] || die "$DIR holds a cluster made before passwords (Postgres trusts every local user): 'cluster.sh down', remove $DIR, and 'up' again"
    mkdir -p "$DIR"
    local k
    (
      umask 077
      for k in POSTGRES_PASSWORD REPLICATION_PASSWORD PATRONI_REST_PASSWORD ETCD_ROOT_PASSWORD ETCD_PATRONI_PASSWORD \
        PLATFORM_DB_PASSWORD MIGRATE_DB_PASSWORD; do
        echo "$k=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')"
      done >"$AUTH_FILE"
    )
  fi
  POSTGRES_PASSWORD="" REPLICATION_PASSWORD="" PATRONI_REST_PASSWORD="" ETCD_ROOT_PASSWORD="" ETCD_PATRONI_PASSWORD=""
  PLATFORM_DB_PASSWORD="" MIGRATE_DB_PASSWORD=""
  local line
  while IFS= read -r line; do
    case "$line" in
      POSTGRES_PASSWORD=*|REPLICATION_PASSWORD=*|PATRONI_REST_PASSWORD=*|ETCD_ROOT_PASSWORD=*|ETCD_PATRONI_PASSWORD=*|PLATFORM_DB_PASSWORD=*|MIGRATE_DB_PASSWORD=*)
        printf -v "${line%%=*}" '%s' "${line#*=}" ;;
    esac
  done < <(cat "$AUTH_FILE" 2>/dev/null || true)
  addr_layout
  local hosts="127.0.0.1:${PG_PORTS[0]},127.0.0.1:${PG_PORTS[1]}" opts="sslmode=disable&target_session_attrs=read-write&connect_timeout=3"
  # what the platform connects as; migrations; operators and tests
  DSN="postgres://platform_app:$PLATFORM_DB_PASSWORD@$hosts/platform?$opts"
  MIGRATE_DSN="postgres://platform_owner:$MIGRATE_DB_PASSWORD@$hosts/platform?$opts"
  ADMIN_DSN="postgres://postgres:$POSTGRES_PASSWORD@$hosts/platform?$opts"
}

# ---------------------------------------------------------------- install

ensure_installed() {
  local missing=()
  command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
  command -v etcdctl >/dev/null 2>&1 || missing+=(etcd-client)
  command -v patroni >/dev/null 2>&1 || missing+=(patroni)
  command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
  # the faults of the nemesis (fault_cmd): links and netem; faketime for clocks
  command -v iptables >/dev/null 2>&1 || missing+=(iptables)
  command -v tc >/dev/null 2>&1 || missing+=(iproute2)
  command -v faketime >/dev/null 2>&1 || missing+=(faketime)
  find_pg_bin
  [ -n "$PG_BIN" ] || missing+=(postgresql)
  if [ ${#missing[@]} -gt 0 ]; then
    apt_install "${missing[@]}"
    find_pg_bin
  fi
  [ -n "$PG_BIN" ] || die "PostgreSQL server binaries missing under /usr/lib/postgresql/*/bin"
  if is_root && ! id postgres >/dev/null 2>&1; then
    die "OS user 'postgres' does not exist (PostgreSQL refuses to run as root)"
  fi
}

# ---------------------------------------------------------------- processes

# The pid of member NAME when it runs (its pid file names a live process whose
# command line has the member's marker), else empty.
member_pid() {
  local name="$1" pid
  [ -f "$RUN/$name.pid" ] || return 0
  pid="$(cat "$RUN/$name.pid" 2>/dev/null || true)"
  case "$pid" in ''|*[!0-9]*) return 0 ;; esac
  local marker; marker="$(cat "$RUN/$name.marker" 2>/dev/null || echo "$name")"
  # pids are reused: the process must carry the member's marker, in its
  # command line or (platform processes) its environment
  if pid_cmdline_has "$pid" "$marker" || { { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qxF "$marker"; }; then
    printf '%s\n' "$pid"
  fi
}

# spawn NAME MARKER CMD...: start CMD detached (own session), log to
# $LOGS/NAME.log, remember its pid. MARKER is a string of its command line.
spawn() {
  local name="$1" marker="$2"; shift 2
  printf '%s' "$marker" >"$RUN/$name.marker"
  setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/$name.pid"
}

# stop_member NAME: TERM, then KILL after 20 s.
stop_member() {
  local name="$1" pid i
  pid="$(member_pid "$name")"
  [ -n "$pid" ] || { rm -f "$RUN/$name.pid"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 80); do [ -n "$(member_pid "$name")" ] || break; sleep 0.25; done
  if [ -n "$(member_pid "$name")" ]; then
    log "$name (pid $pid) still running after 20 s: KILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$RUN/$name.pid"
}

wait_for() { # wait_for SECONDS WHAT CMD...
  local secs="$1" what="$2" i; shift 2
  for i in $(seq 1 $((secs * 4))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.25
  done
  die "$what not ready within ${secs}s (logs: $LOGS)"
}

http_ok() { curl -fsS -m 2 -o /dev/null "$1" 2>/dev/null; }

# ---------------------------------------------------------------- etcd

etcd_up() {
  [ -n "$(member_pid etcd)" ] && return 0
  port_open "$ETCD_CLIENT" && die "port $ETCD_CLIENT (etcd) is in use"
  mkdir -p "$DIR/etcd"
  chmod 700 "$DIR/etcd"   # its users and their password hashes
  log "etcd: starting on 127.0.0.1:$ETCD_CLIENT"
  spawn etcd "$DIR/etcd" etcd --name cluster-etcd --data-dir "$DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT,http://${ETCD_ADDRS[0]}:$ETCD_CLIENT,http://${ETCD_ADDRS[1]}:$ETCD_CLIENT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
    --initial-cluster "cluster-etcd=http://127.0.0.1:$ETCD_PEER" --initial-cluster-state new \
    --enable-v2=true --heartbeat-interval 100 --election-timeout 1000
  wait_for 30 etcd http_ok "http://127.0.0.1:$ETCD_CLIENT/health"
  etcd_auth
}

etcdctl_() { ETCDCTL_API=3 etcdctl --endpoints="http://127.0.0.1:$ETCD_CLIENT" "$@"; }

# etcd_auth: root and a patroni user that may touch only Patroni's keys,
# then authentication on. Idempotent: an anonymous read fails once it is on,
# and a run cut short is finished (etcdctl 3.4 has no `auth status`).
etcd_auth() {
  etcdctl_ get /auth-probe >/dev/null 2>&1 || return 0
  log "etcd: turning authentication on"
  {
    { etcdctl_ user get root >/dev/null 2>&1 || etcdctl_ user add root --new-user-password="$ETCD_ROOT_PASSWORD" --interactive=false; } &&
    { etcdctl_ role get patroni >/dev/null 2>&1 || etcdctl_ role add patroni; } &&
    etcdctl_ role grant-permission patroni --prefix=true readwrite /service/ &&
    { etcdctl_ user get patroni >/dev/null 2>&1 || etcdctl_ user add patroni --new-user-password="$ETCD_PATRONI_PASSWORD" --interactive=false; } &&
    { etcdctl_ user get patroni 2>/dev/null | grep -q '^Roles:.* patroni' || etcdctl_ user grant-role patroni patroni; } &&
    etcdctl_ auth enable
  } >>"$LOGS/etcd.log" 2>&1 || die "etcd: could not turn authentication on (log: $LOGS/etcd.log)"
  ! etcdctl_ get /auth-probe >/dev/null 2>&1 || die "etcd: authentication is still off"
}

# ---------------------------------------------------------------- Patroni

# Parent directories must be traversable by the postgres user (checked, never chmod-ed).
pg_root_prepare() {
  mkdir -p "$PG_ROOT"
  if is_root; then
    runuser -u postgres -- test -x "$DIR" || die "the postgres user cannot reach $DIR; set CLUSTER_DIR to a traversable path"
    chown postgres:postgres "$PG_ROOT"
  fi
  chmod 700 "$PG_ROOT"
}

patroni_conf() { # patroni_conf I
  local i="$1" n=$(( $1 + 1 )) conf="$PG_ROOT/patroni-$(( $1 + 1 )).yml"
  as_pg tee "$conf" >/dev/null <<EOF
# Written by deploy/local/cluster.sh on every 'up'; edits are overwritten.
scope: $SCOPE
name: pg$n
log:
  level: INFO
restapi:
  listen: 127.0.0.1:${REST_PORTS[$i]}
  connect_address: 127.0.0.1:${REST_PORTS[$i]}
  # every change (PATCH /config, POST /restart, /reload, /switchover, ...)
  # wants this; reading (GET /patroni, /primary, /health) does not
  authentication:
    username: patroni
    password: '$PATRONI_REST_PASSWORD'
etcd3:
  # its own address of etcd's (addr_layout), and no other: a fault can cut it
  hosts: ${ETCD_ADDRS[$i]}:$ETCD_CLIENT
  use_proxies: true
  username: patroni
  password: '$ETCD_PATRONI_PASSWORD'
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    maximum_lag_on_failover: 0
    # A crashed primary is not restarted in place: its synchronous standby
    # is promoted at once (the RTO is Patroni's loop, not crash recovery).
    primary_start_timeout: 0
    # An acknowledged commit is on both servers while both run; with one
    # down the survivor accepts writes alone (strict mode would stop every
    # write until the second is back, which two servers cannot afford). A
    # failover only ever promotes the synchronous standby: RPO 0.
    synchronous_mode: true
    synchronous_mode_strict: false
    postgresql:
      use_pg_rewind: true
      remove_data_directory_on_rewind_failure: true
      remove_data_directory_on_diverged_timelines: true
      parameters:
        max_connections: 600
        shared_buffers: 256MB
        wal_level: replica
        wal_log_hints: "on"
        hot_standby: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 512MB
        synchronous_commit: "on"
        # A synchronous standby cut off (not killed: its packets dropped)
        # holds every commit until the walsender gives up on it; then
        # Patroni drops it from synchronous_standby_names (not strict).
        wal_sender_timeout: 10s
        wal_receiver_timeout: 10s
        jit: "off"
        fsync: "on"
  initdb:
    - encoding: UTF8
    - locale: C
    # the superuser's password comes from authentication below (--pwfile)
    - auth-host: scram-sha-256
    - auth-local: scram-sha-256
postgresql:
  # every local user shares 127.0.0.1: a password from each (no socket)
  # (the platform's processes each from their own 127.0.2.N: addr_layout)
  pg_hba:
    - host replication replicator 127.0.0.0/8 scram-sha-256
    - host all all 127.0.0.0/8 scram-sha-256
  # 127.0.0.1 first: Patroni's own connections; the second is what the
  # standby replicates from (addr_layout)
  listen: 127.0.0.1,${PG_ADDRS[$i]}:${PG_PORTS[$i]}
  connect_address: ${PG_ADDRS[$i]}:${PG_PORTS[$i]}
  data_dir: $PG_ROOT/data$n
  bin_dir: $(pg_clock_bin "$n")
  pgpass: $PG_ROOT/pgpass$n
  authentication:
    superuser:
      username: postgres
      password: '$POSTGRES_PASSWORD'
    replication:
      username: replicator
      password: '$REPLICATION_PASSWORD'
  parameters:
    password_encryption: scram-sha-256
    unix_socket_directories: ''
    logging_collector: "off"
    log_line_prefix: '%m [%p] %q%u@%d '
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
EOF
}

patroni_spawn() { # I
  local i="$1" name="patroni-$(( $1 + 1 ))"
  log "$name: starting (postgres 127.0.0.1:${PG_PORTS[$i]}, REST ${REST_PORTS[$i]})"
  # A postmaster left behind by a killed Patroni is adopted by the new one.
  if is_root; then
    # setpriv execs (runuser would fork): the pid is Patroni's own
    spawn "$name" "$PG_ROOT/$name.yml" env HOME="$PG_ROOT" setpriv --reuid=postgres --regid=postgres --init-groups \
      patroni "$PG_ROOT/$name.yml"
  else
    spawn "$name" "$PG_ROOT/$name.yml" patroni "$PG_ROOT/$name.yml"
  fi
}

patroni_up() {
  local i name
  pg_root_prepare
  for i in 0 1; do
    name="patroni-$((i + 1))"
    [ -n "$(member_pid "$name")" ] && continue
    port_open "${REST_PORTS[$i]}" && die "port ${REST_PORTS[$i]} (Patroni REST) is in use"
    patroni_conf "$i"
    patroni_spawn "$i"
  done
  local t
  for t in $(seq 1 240); do
    for i in 0 1; do
      name="patroni-$((i + 1))"
      if [ -z "$(member_pid "$name")" ] && [ $((t % 8)) -eq 0 ]; then
        # e.g. its Postgres port was briefly taken by an outgoing connection
        log "$name exited (last log line: $(tail -n 1 "$LOGS/$name.log" | cut -c1-200)): starting it again"
        pg_orphans_down $((i + 1))
        patroni_spawn "$i"
      fi
    done
    if [ -n "$(member_pid patroni-1)" ] && [ -n "$(member_pid patroni-2)" ] && primary_port >/dev/null 2>&1; then
      break
    fi
    sleep 0.5
  done
  wait_for 60 "a Postgres primary" primary_port
  wait_for 120 "the platform database" ensure_database
}

# rest_get I PATH: Patroni member I's REST answer body
rest_get() { curl -sS -m 2 "http://127.0.0.1:${REST_PORTS[$1]}$2"; }

# primary_port: the port of the member answering 200 on /primary
primary_port() {
  local i
  for i in 0 1; do
    if curl -fsS -m 2 -o /dev/null "http://127.0.0.1:${REST_PORTS[$i]}/primary" 2>/dev/null; then
      echo "${PG_PORTS[$i]}"; return 0
    fi
  done
  return 1
}

psql_primary() {
  local port; port="$(primary_port)" || return 1
  PGPASSWORD="$POSTGRES_PASSWORD" "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -v ON_ERROR_STOP=1 "$@"
}

# ensure_database: the platform database and its roles (roles.sql, the
# template compose's post_bootstrap runs too; safe to run again).
ensure_database() {
  psql_primary -d postgres -v owner_password="$MIGRATE_DB_PASSWORD" -v app_password="$PLATFORM_DB_PASSWORD" \
    -f "$ROLES_SQL" >>"$LOGS/roles.log" 2>&1
}

# ---------------------------------------------------------------- platform

secrets() {
  local f="$DIR/secrets.env" k
  if [ ! -f "$f" ]; then
    umask 077
    {
      for k in JWT_SECRET LEDGER_SALT SIGNING_MASTER_KEY DATA_ENCRYPTION_KEY; do
        echo "$k=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
      done
      echo "PROCESSOR_WEBHOOK_SECRET=whsec_$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
    } >"$f"
  fi
  cat "$f"
}

# platform_env DATA_DIR ADDR METRICS [SOURCE]: the environment of one platform process
platform_env() {
  local data="$1" addr="$2" metrics="$3" source="${4:-}"
  echo "PLATFORM_ENV=development"
  echo "DATABASE_URL=$DSN"
  echo "KAFKA_BROKERS=127.0.0.1:$BROKER_PORT"
  echo "CLICKHOUSE_ADDR=$CH_ADDR"
  echo "CLICKHOUSE_DATABASE=$CH_DB"
  echo "PUBLIC_BASE_URL=http://127.0.0.1:$PROXY_PORT"
  # HAProxy connects from its own loopback address: X-Forwarded-For is
  # believed from it, not from 127.0.0.1, which every local client shares.
  echo "TRUSTED_PROXIES=$PROXY_SOURCE/32"
  echo "DATA_DIR=$data"
  echo "PLATFORM_ADDR=$addr"
  echo "METRICS_ADDR=$metrics"
  [ -z "$source" ] || echo "PLATFORM_SOURCE_ADDR=$source"
  echo "DB_MAX_CONNS=${CLUSTER_DB_MAX_CONNS:-12}"
  echo "LOG_LEVEL=${LOG_LEVEL:-warn}"
  secrets
  [ -f "$ENV_FILE" ] && grep -E '^[A-Za-z_][A-Za-z0-9_]*=' "$ENV_FILE" || true
}

# members: one line per platform process: NAME ADDR METRICS ARGS...
members() {
  local m=$((BASE + 12)) g i
  for i in 1 2; do echo "gateway-$i 127.0.0.1:${GW_PORTS[$((i - 1))]} 127.0.0.1:$m gateway"; m=$((m + 1)); done
  for i in 1 2; do echo "relay-$i 127.0.0.1:0 127.0.0.1:$m relay"; m=$((m + 1)); done
  for g in "${GROUPS_ALL[@]}"; do
    for i in 1 2; do echo "$g-$i 127.0.0.1:0 127.0.0.1:$m consume $g"; m=$((m + 1)); done
  done
}

start_platform_member() { # NAME ADDR METRICS ARGS...
  local name="$1" addr="$2" metrics="$3"; shift 3
  local data="$DIR/data/$name" marker="CLUSTER_MEMBER=$name@$DIR"
  # The gateways share one data directory: mail written in development
  # mode is found whichever gateway sent it.
  case "$name" in gateway-*) data="$DIR/data/gateway" ;; esac
  mkdir -p "$data"
  local envs=()
  mapfile -t envs < <(platform_env "$data" "$addr" "$metrics" "$(member_addr "$name")")
  # The marker is in the environment: member_pid finds it there.
  printf '%s' "$marker" >"$RUN/$name.marker"
  setsid env "$marker" "${envs[@]}" "$BIN" "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/$name.pid"
}

broker_up() {
  [ -n "$(member_pid broker)" ] && return 0
  port_open "$BROKER_PORT" && die "port $BROKER_PORT (broker) is in use"
  mkdir -p "$DIR/data/broker"
  log "broker: starting on 127.0.0.1:$BROKER_PORT"
  local marker="CLUSTER_MEMBER=broker@$DIR"
  printf '%s' "$marker" >"$RUN/broker.marker"
  setsid env "$marker" PLATFORM_ENV=development DATA_DIR="$DIR/data/broker" KAFKA_EMBEDDED_PORT="$BROKER_PORT" \
    KAFKA_BROKERS= DATABASE_URL="$DSN" LOG_LEVEL="${LOG_LEVEL:-warn}" "$BIN" broker >>"$LOGS/broker.log" 2>&1 </dev/null &
  echo $! >"$RUN/broker.pid"
  wait_for 60 broker port_open "$BROKER_PORT"
}

# migrate as platform_owner, then hand the event log to platform_app (the
# relay creates and drops its partitions)
migrate() {
  local envs=()
  mapfile -t envs < <(platform_env "$DIR/data/migrate" 127.0.0.1:0 127.0.0.1:0)
  mkdir -p "$DIR/data/migrate"
  env "${envs[@]}" DATABASE_URL="$MIGRATE_DSN" "$BIN" migrate >>"$LOGS/migrate.log" 2>&1 || { tail -n 20 "$LOGS/migrate.log" >&2; die "platform migrate failed"; }
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -f "$EVENT_LOG_SQL" "$MIGRATE_DSN" >>"$LOGS/migrate.log" 2>&1 || { tail -n 20 "$LOGS/migrate.log" >&2; die "event_log_owner.sql failed"; }
}

platform_up() {
  [ -x "$BIN" ] || die "no platform binary at $BIN (make build, or set PLATFORM_BIN)"
  broker_up
  # migrate once per binary (a rebuilt one may bring new migrations)
  local stamp; stamp="$(stat -c '%s-%Y' "$BIN")"
  if [ "$(cat "$DIR/migrated" 2>/dev/null || true)" != "$stamp" ]; then
    log "platform: migrate"
    migrate
    echo "$stamp" >"$DIR/migrated"
  fi
  local line started=()
  while read -r line; do
    # shellcheck disable=SC2086
    set -- $line
    [ -n "$(member_pid "$1")" ] && continue
    start_platform_member "$@"
    started+=("$1")
  done < <(members)
  [ ${#started[@]} -eq 0 ] || log "platform: started ${started[*]}"
  platform_settle
}

# member_ready NAME ADDR METRICS ARGS...: running, and its listener answers
member_ready() {
  [ -n "$(member_pid "$1")" ] || return 1
  case "$1" in
    gateway-*) http_ok "http://$2/api/platform/version" ;;
    relay-*) return 0 ;;
    *) http_ok "http://$3/metrics" ;;
  esac
}

# platform_settle waits until every platform member is ready. One that
# exited is started again: its port may have been taken meanwhile by some
# outgoing connection (the cluster's ports can lie in the kernel's ephemeral
# range), or Postgres or the broker may not have answered yet.
platform_settle() {
  local i line pending
  for i in $(seq 1 240); do
    pending=0
    while read -r line; do
      # shellcheck disable=SC2086
      set -- $line
      member_ready "$@" && continue
      pending=1
      if [ -z "$(member_pid "$1")" ] && [ $((i % 8)) -eq 0 ]; then
        log "$1 is not running (last log line: $(tail -n 1 "$LOGS/$1.log" 2>/dev/null | cut -c1-200)): starting it again"
        start_platform_member "$@"
      fi
    done < <(members)
    [ "$pending" -eq 0 ] && return 0
    sleep 0.5
  done
  die "platform members not ready within 120s (logs: $LOGS)"
}

# ---------------------------------------------------------------- HAProxy

haproxy_conf() {
  cat >"$DIR/haproxy.cfg" <<EOF
# Written by deploy/local/cluster.sh on every 'up'; edits are overwritten.
global
    maxconn 4096
    pidfile $RUN/haproxy.pid.haproxy
defaults
    mode http
    option httplog
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # A request whose connection to a gateway could not be made goes to the
    # other one (nothing reached the killed one, so nothing is sent twice).
    retries 2
    option redispatch 1
    retry-on conn-failure
    # A gateway killed mid-request answers nothing: the client gets a 503,
    # the platform's "retry with the same Idempotency-Key", not a 502.
    errorfile 502 $DIR/haproxy-503.http
    errorfile 504 $DIR/haproxy-503.http
    errorfile 503 $DIR/haproxy-503.http
frontend api
    bind 127.0.0.1:$PROXY_PORT
    option forwardfor
    default_backend gateways
backend gateways
    balance roundrobin
    option httpchk GET /api/platform/version
    http-check expect status 200
    default-server inter 500ms fall 2 rise 2
    # from its own address: the gateways believe X-Forwarded-For from it only
    source $PROXY_SOURCE
    server gw1 127.0.0.1:${GW_PORTS[0]} check
    server gw2 127.0.0.1:${GW_PORTS[1]} check
listen stats
    bind 127.0.0.1:$STATS_PORT
    stats enable
    stats uri /
EOF
  printf 'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{"error":"unavailable","message":"the platform is busy; retry with the same Idempotency-Key"}\n' >"$DIR/haproxy-503.http"
}

haproxy_up() {
  [ -n "$(member_pid haproxy)" ] && return 0
  port_open "$PROXY_PORT" && die "port $PROXY_PORT (HAProxy) is in use"
  haproxy_conf
  haproxy -c -q -f "$DIR/haproxy.cfg" || die "haproxy.cfg is invalid"
  log "haproxy: starting on 127.0.0.1:$PROXY_PORT (stats http://127.0.0.1:$STATS_PORT/)"
  spawn haproxy "$DIR/haproxy.cfg" haproxy -db -f "$DIR/haproxy.cfg"
  wait_for 30 "the API through HAProxy" http_ok "http://127.0.0.1:$PROXY_PORT/api/platform/version"
}

# ---------------------------------------------------------------- faults

# The nemesis's tools (e2e TestNemesis): cut a link, slow or drop packets on
# the Postgres links, move a Postgres member's clock. Every rule names only
# loopback addresses, the lo interface and this cluster's ports, carries the
# comment fault-$SCOPE, and is removed by 'fault clear' and by 'down'.
FAULT_TAG="fault-$SCOPE"

fault_usage() {
  cat >&2 <<USAGE
usage: $0 fault cut SRC DST PORT   drop TCP between SRC (a 127.x address or
                                   127.0.0.0/8) and DST:PORT, both ways
       $0 fault heal SRC DST PORT  undo that cut
       $0 fault netem PORT...      delay and loss (NETEM, default "delay 200ms
                                   100ms loss 5%") on TCP to and from PORT...;
                                   without sch_netem, loss alone (NETEM_LOSS 0.05)
       $0 fault unnetem PORT...    undo that
       $0 fault clock N OFFSET     Postgres member N's wall clock off by OFFSET
                                   (+30s, -30s; +0 puts it back)
       $0 fault clear              undo every fault of this cluster
PORTs are this cluster's: $BASE to $((BASE + 29)).
USAGE
  exit 2
}

fault_addr_ok() { [[ "$1" =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}(/(8|16|24|32))?$ ]]; }
fault_port_ok() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge "$BASE" ] && [ "$1" -lt $((BASE + 30)) ]; }

# fault_rule -I|-D SRC DST PORT: both directions of the link
fault_rule() {
  local op="$1" src="$2" dst="$3" port="$4"
  if ! fault_addr_ok "$src" || ! fault_addr_ok "$dst"; then die "fault: '$src' or '$dst' is not a loopback address"; fi
  fault_port_ok "$port" || die "fault: port '$port' is not this cluster's ($BASE-$((BASE + 29)))"
  iptables -w 5 "$op" OUTPUT -o lo -p tcp -s "$src" -d "$dst" --dport "$port" -m comment --comment "$FAULT_TAG" -j DROP
  iptables -w 5 "$op" OUTPUT -o lo -p tcp -s "$dst" --sport "$port" -d "$src" -m comment --comment "$FAULT_TAG" -j DROP
}

# fault_netem PORT...: delay and loss on TCP to and from PORT... with tc
# netem on lo; a kernel without sch_netem (some VMs) gets the loss alone,
# from iptables' statistic match. Prints what it did: "netem SPEC" or "loss P".
fault_netem() {
  [ $# -gt 0 ] || fault_usage
  local spec="${NETEM:-delay 200ms 100ms loss 5%}" loss="${NETEM_LOSS:-0.05}" port
  for port in "$@"; do fault_port_ok "$port" || die "fault: port '$port' is not this cluster's"; done
  [[ "$loss" =~ ^0?\.[0-9]+$ ]] || die "fault: NETEM_LOSS '$loss' is not a probability like 0.05"
  if [ ! -f "$RUN/netem" ]; then
    # a root qdisc on lo that is not ours is left alone
    tc qdisc show dev lo | grep -q '^qdisc noqueue 0: root' || die "fault: lo has a root qdisc that this cluster did not add: $(tc qdisc show dev lo | head -n1)"
    # four bands: 1-3 as pfifo_fast would, the fourth (only our filters) netem
    if tc qdisc add dev lo root handle 1: prio bands 4 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1 2>/dev/null; then
      # shellcheck disable=SC2086
      tc qdisc add dev lo parent 1:4 handle 40: netem limit 100000 $spec || { tc qdisc del dev lo root; die "fault: tc qdisc netem failed"; }
      echo "$spec" >"$RUN/netem"
    fi
  fi
  if [ ! -f "$RUN/netem" ]; then
    for port in "$@"; do
      iptables -w 5 -I OUTPUT -o lo -p tcp -d 127.0.0.0/8 --dport "$port" -m statistic --mode random --probability "$loss" \
        -m comment --comment "$FAULT_TAG" -j DROP
      iptables -w 5 -I OUTPUT -o lo -p tcp -s 127.0.0.0/8 --sport "$port" -m statistic --mode random --probability "$loss" \
        -m comment --comment "$FAULT_TAG" -j DROP
    done
    echo "loss $loss"
    return 0
  fi
  for port in "$@"; do
    tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip protocol 6 0xff match ip dst 127.0.0.0/8 \
      match ip dport "$port" 0xffff flowid 1:4
    tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip protocol 6 0xff match ip src 127.0.0.0/8 \
      match ip sport "$port" 0xffff flowid 1:4
  done
  echo "netem $(cat "$RUN/netem")"
}

# fault_unnetem PORT...: the delay and loss on PORT... undone (tc's root
# qdisc, when netem is ours, goes with every port)
fault_unnetem() {
  local port line
  if [ -f "$RUN/netem" ]; then
    tc qdisc del dev lo root 2>/dev/null || true
    rm -f "$RUN/netem"
  fi
  for port in "$@"; do
    fault_port_ok "$port" || die "fault: port '$port' is not this cluster's"
    while IFS= read -r line; do
      # shellcheck disable=SC2086
      iptables -w 5 -D ${line#-A } || true
    done < <(iptables -w 5 -S OUTPUT 2>/dev/null | grep -F -- "--comment $FAULT_TAG -j DROP" | grep -E -- "--[sd]port $port -m statistic" || true)
  done
}

# pg_clock_bin N: the bin_dir Patroni runs member N's Postgres from. With
# libfaketime installed it is the server's binaries, except that 'postgres'
# starts the real one under libfaketime with the wall-clock offset in
# \$RUN/pg-N.clock ('fault clock'): a machine whose clock is off. Postgres
# only: libfaketime under Patroni (Python) left its timed waits hanging, and
# the platform's Go processes read the clock from the vDSO, past any
# LD_PRELOAD. Monotonic time stays real (as NTP leaves it).
pg_clock_bin() {
  local n="$1" lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 dir="$PG_ROOT/bin$1" f
  if [ ! -f "$lib" ]; then echo "$PG_BIN"; return 0; fi
  mkdir -p "$dir"
  for f in "$PG_BIN"/*; do [ "$(basename "$f")" = postgres ] || ln -sfn "$f" "$dir/$(basename "$f")"; done
  [ -f "$RUN/pg-$n.clock" ] || echo "+0" >"$RUN/pg-$n.clock"
  cat >"$dir/postgres" <<WRAP
#!/bin/sh
# Written by deploy/local/cluster.sh: Postgres under libfaketime (fault clock)
exec env LD_PRELOAD=$lib FAKETIME_TIMESTAMP_FILE=$RUN/pg-$n.clock FAKETIME_CACHE_DURATION=1 \\
  FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_DISABLE_SHM=1 $PG_BIN/postgres "\$@"
WRAP
  chmod 755 "$dir/postgres"
  is_root && chown -R postgres:postgres "$dir"
  echo "$dir"
}

# fault_clock N OFFSET: Postgres member N's wall clock moves by OFFSET
# (+30s, -30s; +0 puts it back), within a second
fault_clock() {
  [[ "$1" =~ ^[12]$ ]] || die "fault clock: member '$1' is not 1 or 2"
  [[ "$2" =~ ^[+-][0-9]+[smh]?$ ]] || die "fault clock: offset '$2' is not like +30s"
  [ -f "$RUN/pg-$1.clock" ] || die "fault clock: pg$1 does not run under libfaketime (make cluster-deps, then a new cluster)"
  echo "$2" >"$RUN/pg-$1.clock"
}

fault_clear() {
  local line
  if command -v iptables >/dev/null 2>&1; then
    while IFS= read -r line; do
      # shellcheck disable=SC2086
      iptables -w 5 -D ${line#-A } || true
    done < <(iptables -w 5 -S OUTPUT 2>/dev/null | grep -F -- "--comment $FAULT_TAG -j DROP" || true)
  fi
  if [ -f "$RUN/netem" ]; then
    tc qdisc del dev lo root 2>/dev/null || true
    rm -f "$RUN/netem"
  fi
  local n
  for n in 1 2; do [ ! -f "$RUN/pg-$n.clock" ] || echo "+0" >"$RUN/pg-$n.clock"; done
}

fault_cmd() {
  case "${1:-}" in
    cut) [ $# -eq 4 ] || fault_usage; fault_rule -I "$2" "$3" "$4" ;;
    heal) [ $# -eq 4 ] || fault_usage; fault_rule -D "$2" "$3" "$4" ;;
    netem) shift; fault_netem "$@" ;;
    unnetem) shift; fault_unnetem "$@" ;;
    clock) [ $# -eq 3 ] || fault_usage; fault_clock "$2" "$3" ;;
    clear) fault_clear ;;
    *) fault_usage ;;
  esac
}

# ---------------------------------------------------------------- status

all_members() {
  echo etcd; echo patroni-1; echo patroni-2; echo broker
  members | cut -d' ' -f1
  echo haproxy
}

health_of() { # NAME: a word on its health
  local name="$1" line
  case "$name" in
    etcd) http_ok "http://127.0.0.1:$ETCD_CLIENT/health" && echo healthy || echo unhealthy ;;
    patroni-*)
      local i=$(( ${name#patroni-} - 1 ))
      rest_get "$i" /patroni 2>/dev/null | python3 -c 'import json,sys
d=json.load(sys.stdin); r=d.get("role","?"); s=d.get("state","?")
print("%s %s%s" % (r, s, " sync" if d.get("sync_standby") else ""))' 2>/dev/null || echo "no answer" ;;
    broker) port_open "$BROKER_PORT" && echo listening || echo "not listening" ;;
    haproxy) http_ok "http://127.0.0.1:$PROXY_PORT/api/platform/version" && echo "API answers" || echo "API does not answer" ;;
    gateway-*) line="$(members | grep "^$name ")"; http_ok "http://$(echo "$line" | cut -d' ' -f2)/api/platform/version" && echo "answers" || echo "does not answer" ;;
    relay-*) echo "running (no listener; one of the two holds the publish lock)" ;;
    *) line="$(members | grep "^$name ")"; http_ok "http://$(echo "$line" | cut -d' ' -f3)/metrics" && echo "metrics answer" || echo "metrics do not answer" ;;
  esac
}

cluster_status() {
  find_pg_bin
  local rc=0 name pid
  printf '%-30s %-8s %s\n' MEMBER PID HEALTH
  while read -r name; do
    pid="$(member_pid "$name")"
    if [ -n "$pid" ]; then
      printf '%-30s %-8s %s\n' "$name" "$pid" "$(health_of "$name")"
    else
      printf '%-30s %-8s %s\n' "$name" "-" "stopped"; rc=1
    fi
  done < <(all_members)
  echo
  if command -v patronictl >/dev/null 2>&1 && [ -f "$PG_ROOT/patroni-1.yml" ]; then
    patronictl -c "$PG_ROOT/patroni-1.yml" list 2>/dev/null || echo "patronictl: no answer"
  fi
  local relay
  relay="$(psql_primary -d platform -tAc "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted" 2>/dev/null || echo "?")"
  echo "advisory locks held on the primary: $relay (the active relay holds one)"
  echo "API: http://127.0.0.1:$PROXY_PORT  (HAProxy stats http://127.0.0.1:$STATS_PORT/)"
  return "$rc"
}

print_env() {
  echo "export PLATFORM_URL='http://127.0.0.1:$PROXY_PORT'"
  echo "export DATABASE_URL='$DSN'"
  echo "export MIGRATE_DATABASE_URL='$MIGRATE_DSN'"
  echo "export ADMIN_DATABASE_URL='$ADMIN_DSN'"
  echo "export PATRONI_URLS='http://127.0.0.1:${REST_PORTS[0]},http://127.0.0.1:${REST_PORTS[1]}'"
  echo "export PATRONI_REST_USERNAME='patroni'"
  echo "export PATRONI_REST_PASSWORD='$PATRONI_REST_PASSWORD'"
  echo "export KAFKA_BROKERS='127.0.0.1:$BROKER_PORT'"
  echo "export CLICKHOUSE_ADDR='$CH_ADDR'"
}

cluster_up() {
  ensure_installed
  mkdir -p "$DIR" "$RUN" "$LOGS"
  etcd_up
  patroni_up
  platform_up
  haproxy_up
  log "cluster is up: API http://127.0.0.1:$PROXY_PORT"
}

# A postmaster whose Patroni was killed keeps running: stop it (fast
# shutdown, then KILL), so that its port is free for the next 'up'.
pg_orphans_down() { # [N...]: members 1 and 2 by default
  local n pid i ns=("$@")
  [ ${#ns[@]} -gt 0 ] || ns=(1 2)
  for n in "${ns[@]}"; do
    pid="$(head -n1 "$PG_ROOT/data$n/postmaster.pid" 2>/dev/null || true)"
    pid_cmdline_has "$pid" "$PG_ROOT/data$n" || continue
    log "postgres pg$n (pid $pid) outlived its Patroni: stopping it"
    kill -INT "$pid" 2>/dev/null || true
    for i in $(seq 1 80); do pid_cmdline_has "$pid" "$PG_ROOT/data$n" || break; sleep 0.25; done
    pid_cmdline_has "$pid" "$PG_ROOT/data$n" && kill -KILL "$pid" 2>/dev/null || true
  done
}

cluster_down() {
  local name
  fault_clear
  stop_member haproxy
  while read -r name; do stop_member "$name"; done < <(members | cut -d' ' -f1)
  stop_member broker
  # replica first, so the primary does not wait for it on the way down
  stop_member patroni-2
  stop_member patroni-1
  pg_orphans_down
  stop_member etcd
  log "cluster is down (data kept in $DIR)"
}

case "${1:-}" in
  up) auth_load create; cluster_up ;;
  down) cluster_down ;;
  status) auth_load; cluster_status ;;
  env) auth_load; print_env ;;
  install) ensure_installed ;;
  addrs) addr_layout; print_addrs ;;
  fault) addr_layout; shift; fault_cmd "$@" ;;
  *) echo "usage: $0 up|down|status|env|install|addrs|fault" >&2; exit 2 ;;
esac
