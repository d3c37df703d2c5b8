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
#   Prometheus scraping every member (the platform processes' METRICS_ADDR,
#     the broker's, each Patroni's REST /metrics) with the alert rules of
#     deploy/prometheus/alerts.yml, and Alertmanager, which routes every alert
#     to CLUSTER_ALERT_WEBHOOK (none: alerts are only listed, in its API and UI)
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
#   CLUSTER_PORT_BASE  default 56100; the cluster uses the 32 ports from it
#                      (and BASE+32 onwards for a group's processes past the second)
#   CLICKHOUSE_ADDR    default 127.0.0.1:19000
#   CLICKHOUSE_DATABASE default platform_cluster
#   PLATFORM_BIN       default <repo>/bin/platform (built by `make build`)
#   CLUSTER_ENV_FILE   default $CLUSTER_DIR/platform.env: extra KEY=VALUE lines
#                      every platform process gets (e.g. admin e-mails)
#   CLUSTER_PROXY_SOURCE default 127.0.1.1: the loopback address HAProxy
#                      connects to the gateways from (their TRUSTED_PROXIES)
#   CLUSTER_ALERT_WEBHOOK  URL Alertmanager posts alerts to (webhook receiver,
#                      resolved ones too); unset: no receiver
#   CLUSTER_PROCESSES  default none: "GROUP=N ...", N processes (1-12) of a
#                      consumer group instead of 2
#   CLUSTER_ALERT_RULES  the rule file Prometheus evaluates, default
#                      deploy/prometheus/alerts.yml (the nemesis loads a copy
#                      with shorter `for:`, e2e/nemesis_alerts_test.go)
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

# The settings 'up' started the cluster with, written into $DIR/settings.env
# and read back by every later command (status, env, down, ...): CLUSTER_DIR
# alone names a cluster, and a variable exported for another one does not
# change what these commands look at. On 'up' the environment wins (and is
# saved), the file filling what it leaves unset; the consumer groups are
# asked of the binary again then.
SETTINGS_FILE="$DIR/settings.env"
SETTINGS=(CLUSTER_PORT_BASE CLUSTER_NET CLICKHOUSE_ADDR CLICKHOUSE_DATABASE PLATFORM_BIN CLUSTER_ENV_FILE
  CLUSTER_PROXY_SOURCE CLUSTER_ALERT_WEBHOOK CLUSTER_GROUPS)
settings_load() { # up|other
  local line k
  [ -f "$SETTINGS_FILE" ] || return 0
  while IFS= read -r line; do
    k="${line%%=*}"
    case " ${SETTINGS[*]} " in *" $k "*) ;; *) continue ;; esac
    if [ "$1" = up ]; then
      if [ "$k" = CLUSTER_GROUPS ] || [ -n "${!k:-}" ]; then continue; fi
    fi
    printf -v "$k" '%s' "${line#*=}"
  done <"$SETTINGS_FILE"
}
settings_save() {
  {
    echo "CLUSTER_PORT_BASE=$BASE"
    echo "CLUSTER_NET=$CLUSTER_NET"
    echo "CLICKHOUSE_ADDR=$CH_ADDR"
    echo "CLICKHOUSE_DATABASE=$CH_DB"
    echo "PLATFORM_BIN=$BIN"
    echo "CLUSTER_ENV_FILE=$ENV_FILE"
    echo "CLUSTER_PROXY_SOURCE=$PROXY_SOURCE"
    [ -z "${CLUSTER_ALERT_WEBHOOK:-}" ] || echo "CLUSTER_ALERT_WEBHOOK=$CLUSTER_ALERT_WEBHOOK"
    echo "CLUSTER_GROUPS=$CLUSTER_GROUPS"
  } >"$SETTINGS_FILE.tmp"
  mv "$SETTINGS_FILE.tmp" "$SETTINGS_FILE"
}
if [ "${1:-}" = up ]; then settings_load up; else settings_load other; fi
BASE="${CLUSTER_PORT_BASE:-56100}"
case "$BASE" in ''|*[!0-9]*) die "CLUSTER_PORT_BASE '$BASE' is not a number" ;; esac
if [ "$BASE" -lt 1024 ] || [ "$BASE" -gt 65500 ]; then die "CLUSTER_PORT_BASE $BASE out of range"; fi
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
BROKER_PORT=$((BASE + 8));    BROKER_METRICS=$((BASE + 9))
GW_PORTS=($((BASE + 10)) $((BASE + 11)))
# metrics listeners: BASE+12 onwards, one per platform process (see members:
# 18 of them, to BASE+29)
PROM_PORT=$((BASE + 30));     AM_PORT=$((BASE + 31))

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

# The consumer groups: the binary's (`platform consume --list`) when 'up'
# starts the cluster, remembered in settings.env for the later commands
# (a binary rebuilt meanwhile does not change what runs).
groups_load() {
  if [ -z "${CLUSTER_GROUPS:-}" ]; then
    [ -x "$BIN" ] || die "no platform binary at $BIN (make build, or set PLATFORM_BIN)"
    CLUSTER_GROUPS="$("$BIN" consume --list --env-file none | tr '\n' ' ')" || die "$BIN consume --list failed"
    CLUSTER_GROUPS="${CLUSTER_GROUPS% }"
  fi
  read -r -a GROUPS_ALL <<<"$CLUSTER_GROUPS"
}

# CLUSTER_PROCESSES: how many processes run a consumer group, as
# "GROUP=N ..." (1 to 12, a command topic's partitions; every group not
# named runs 2). `up` with other numbers starts or stops the difference
# (make bench-cluster measures the fiat applier with 1, 2 and 3).
PROCESSES="${CLUSTER_PROCESSES:-}"
for p in $PROCESSES; do
  [[ "$p" =~ ^[a-z-]+=([1-9]|1[0-2])$ ]] || die "CLUSTER_PROCESSES: '$p' is not GROUP=N with N from 1 to 12"
done
# processes_of GROUP: the number of processes CLUSTER_PROCESSES gives it
processes_of() {
  local p
  for p in $PROCESSES; do [ "${p%%=*}" != "$1" ] || { echo "${p#*=}"; return; }; done
  echo 2
}

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
  # promtool checks and unit-tests the alert rules (deploy/prometheus,
  # cmd/platform TestAlertRules in make test)
  command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
  command -v prometheus-alertmanager >/dev/null 2>&1 || missing+=(prometheus-alertmanager)
  command -v pgbackrest >/dev/null 2>&1 || missing+=(pgbackrest)
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
  if pid_cmdline_has "$pid" "$marker" || grep -qxF -- "$marker" <<<"$( { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null)"; then
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
    { grep -q '^Roles:.* patroni' <<<"$(etcdctl_ user get patroni 2>/dev/null)" || etcdctl_ user grant-role patroni patroni; } &&
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

# patroni_conf I: member I's patroni.yml, rendered by the binary from the
# one Patroni template (`platform render patroni`, compose's too); the
# passwords go on its stdin, never on a command line.
patroni_conf() {
  local i="$1" n=$(( $1 + 1 )) conf="$PG_ROOT/patroni-$(( $1 + 1 )).yml" yml
  yml="$("$BIN" render patroni --stdin --env-file none <<EOF
scope=$SCOPE
name=pg$n
rest_address=127.0.0.1:${REST_PORTS[$i]}
rest_password=$PATRONI_REST_PASSWORD
etcd_hosts=${ETCD_ADDRS[$i]}:$ETCD_CLIENT
etcd_password=$ETCD_PATRONI_PASSWORD
shared_buffers=256MB
wal_keep_size=512MB
pg_address=${PG_ADDRS[$i]}:${PG_PORTS[$i]}
data_dir=$PG_ROOT/data$n
bin_dir=$(pg_clock_bin "$n")
pgpass=$PG_ROOT/pgpass$n
postgres_password=$POSTGRES_PASSWORD
replication_password=$REPLICATION_PASSWORD
socket_dir=$PG_ROOT/sock$n
archive_timeout=${ARCHIVE_TIMEOUT:-60}
backup_command=pgbackrest --config=$BACKUP_CONF --stanza=$STANZA --pg1-path=$PG_ROOT/data$n
EOF
)" || die "platform render patroni failed"
  printf '%s\n' "$yml" | as_pg tee "$conf" >/dev/null
}

patroni_spawn() { # I
  local i="$1" name="patroni-$(( $1 + 1 ))"
  log "$name: starting (postgres 127.0.0.1:${PG_PORTS[$i]}, REST ${REST_PORTS[$i]})"
  # A postmaster left behind by a killed Patroni is adopted by the new one.
  # Patroni runs through deploy/patroni/patroni_run.py: Debian's Patroni
  # with upstream's fix of its rewind check (the script says which).
  local run=(/usr/bin/python3 "$REPO_ROOT/deploy/patroni/patroni_run.py" "$PG_ROOT/$name.yml")
  if is_root; then
    # setpriv execs (runuser would fork): the pid is Patroni's own
    spawn "$name" "$PG_ROOT/$name.yml" env HOME="$PG_ROOT" setpriv --reuid=postgres --regid=postgres --init-groups "${run[@]}"
  else
    spawn "$name" "$PG_ROOT/$name.yml" "${run[@]}"
  fi
}

# leader_key_release I: before member I's Patroni starts again, the leader
# key it holds is deleted when its postmaster is gone too (a lost machine,
# back): no process of the member acknowledges a write, and nobody renews
# the key's lease. Patroni 3.0.2 cannot hand it over itself: on the way up
# it re-leases the key (a new mod_revision), finds the primary crashed,
# "fails over" by deleting the key compared with the mod_revision it read
# before, which no longer matches (nothing is deleted, "Leader key
# released" is logged all the same), keeps the key and promotes its own
# Postgres again; the standby follows it, never promoted (issue 44). Later
# Patroni releases the key by its value. Compared with the value and the
# mod_revision read here: a key someone took meanwhile stays.
leader_key_release() {
  local i="$1" n=$(( $1 + 1 )) key="/service/$SCOPE/leader" pm got val rev
  pm="$(head -n1 "$PG_ROOT/data$n/postmaster.pid" 2>/dev/null || true)"
  pid_cmdline_has "$pm" "$PG_ROOT/data$n" && return 0
  got="$(etcdctl_ --command-timeout=15s --user "root:$ETCD_ROOT_PASSWORD" get "$key" -w json 2>/dev/null | python3 -c 'import base64,json,sys
kvs=json.load(sys.stdin).get("kvs") or []
print("%s %s" % (base64.b64decode(kvs[0]["value"]).decode(), kvs[0]["mod_revision"]) if kvs else "")' 2>/dev/null || true)"
  read -r val rev <<<"$got" || true
  [ "$val" = "pg$n" ] && [ -n "$rev" ] || return 0
  local out
  out="$(printf 'value("%s") = "%s"\nmod("%s") = "%s"\n\ndel %s\n\n\n' "$key" "$val" "$key" "$rev" "$key" |
    etcdctl_ --command-timeout=15s --user "root:$ETCD_ROOT_PASSWORD" txn 2>>"$LOGS/etcd.log" || true)"
  if grep -qx SUCCESS <<<"$out"; then
    log "patroni-$n: released its leader key (mod_revision $rev; its Patroni and postmaster were gone) before it starts again"
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
    leader_key_release "$i"
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
        leader_key_release "$i"
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

# secrets: the platform's secrets, generated once by the binary in their
# formats (`platform envfile secrets`, mode 600)
secrets() {
  local f="$DIR/secrets.env"
  [ -f "$f" ] || "$BIN" envfile secrets "$f" --env-file none || die "$BIN envfile secrets failed"
  cat "$f"
}

# platform_env DATA_DIR ADDR METRICS [NAME]: the environment of one platform process
platform_env() {
  local data="$1" addr="$2" metrics="$3" name="${4:-}" source=""
  # its own loopback address to connect from (addr_layout): a fault can cut
  # one process's links
  [ -z "$name" ] || source="$(member_addr "$name" || true)"
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
  echo "LOG_LEVEL=$(member_log_level "$name")"
  backup_env
  secrets
  if [ -f "$ENV_FILE" ]; then grep -E '^[A-Za-z_][A-Za-z0-9_]*=' "$ENV_FILE" || true; fi
}

# members: one line per platform process: NAME ADDR METRICS ARGS...
members() {
  local m=$((BASE + 12)) g i
  for i in 1 2; do echo "gateway-$i 127.0.0.1:${GW_PORTS[$((i - 1))]} 127.0.0.1:$m gateway"; m=$((m + 1)); done
  for i in 1 2; do echo "relay-$i 127.0.0.1:0 127.0.0.1:$m relay"; m=$((m + 1)); done
  for g in "${GROUPS_ALL[@]}"; do
    for i in 1 2; do
      # a group of one process leaves its second's port unused
      [ "$i" -le "$(processes_of "$g")" ] || { m=$((m + 1)); continue; }
      echo "$g-$i 127.0.0.1:0 127.0.0.1:$m consume $g"; m=$((m + 1))
    done
  done
  # processes past a group's second: last, so that the others keep their
  # ports and addresses. Their metrics listen on BASE+32 onwards at their
  # own address (member_addr), not 127.0.0.1: a port started late in the
  # ephemeral range is often some 127.0.0.1 connection's (Prometheus's).
  local extra=0
  for g in "${GROUPS_ALL[@]}"; do
    for i in $(seq 3 "$(processes_of "$g")"); do
      echo "$g-$i 127.0.0.1:0 $CLUSTER_NET.$((100 + 4 + 2 * ${#GROUPS_ALL[@]} + extra)):$((BASE + 32 + extra)) consume $g"
      extra=$((extra + 1))
    done
  done
}

# scaled_in: consumer processes still running past their CLUSTER_PROCESSES
# (the cluster was up with more): 'up' and 'down' stop them
scaled_in() {
  local f name g all
  all="$(members)"
  for g in "${GROUPS_ALL[@]}"; do
    for f in "$RUN/$g"-*.pid; do
      [ -f "$f" ] || continue
      name="$(basename "$f" .pid)"
      grep -q "^$name " <<<"$all" || echo "$name"
    done
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
  mapfile -t envs < <(platform_env "$data" "$addr" "$metrics" "$name")
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
    METRICS_ADDR="127.0.0.1:$BROKER_METRICS" \
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
    log "platform: stopping $line (CLUSTER_PROCESSES=$PROCESSES)"
    stop_member "$line"
  done < <(scaled_in)
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
    # one line per request (option httplog) on its stdout: $LOGS/haproxy.log
    log stdout format raw local0 info
    pidfile $RUN/haproxy.pid.haproxy
defaults
    mode http
    log global
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
$(haproxy_conf_ops)
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

# ---------------------------------------------------------------- monitoring

# metrics_targets JOB: the scrape addresses of one job of prometheus.yml
metrics_targets() {
  case "$1" in
    platform-gateway) members | awk '$1 ~ /^gateway-/ {print $3}' ;;
    platform-relay) members | awk '$1 ~ /^relay-/ {print $3}' ;;
    platform-consumer) members | awk '$4 == "consume" {print $3}' ;;
    platform-broker) echo "127.0.0.1:$BROKER_METRICS" ;;
    patroni) printf '127.0.0.1:%s\n' "${REST_PORTS[@]}" ;;
  esac
}

prometheus_conf() {
  local job t
  {
    echo "# written by deploy/local/cluster.sh"
    echo "global:"
    echo "  scrape_interval: 5s"
    echo "  evaluation_interval: 5s"
    echo "rule_files:"
    echo "  - ${CLUSTER_ALERT_RULES:-$REPO_ROOT/deploy/prometheus/alerts.yml}"
    echo "alerting:"
    echo "  alertmanagers:"
    echo "    - static_configs:"
    echo "        - targets: ['127.0.0.1:$AM_PORT']"
    echo "scrape_configs:"
    for job in platform-gateway platform-relay platform-consumer platform-broker patroni; do
      echo "  - job_name: $job"
      echo "    static_configs:"
      echo "      - targets:"
      while read -r t; do echo "          - '$t'"; done < <(metrics_targets "$job")
    done
  } >"$DIR/prometheus.yml"
}

alertmanager_conf() {
  {
    echo "# written by deploy/local/cluster.sh"
    echo "route:"
    echo "  receiver: webhook"
    echo "  group_by: [alertname]"
    # 2 s: an alert that fires and resolves within group_wait is never
    # sent; a lost machine's PatroniNoLeader (the 20 s leader TTL, against
    # the nemesis's for: of 5 s, a scrape and an evaluation) left 5 s too
    # little margin (production's alertmanager.yml waits 30 s on a 1m for:)
    echo "  group_wait: 2s"
    echo "  group_interval: 10s"
    echo "  repeat_interval: 1h"
    echo "receivers:"
    echo "  - name: webhook"
    if [ -n "${CLUSTER_ALERT_WEBHOOK:-}" ]; then
      echo "    webhook_configs:"
      echo "      - url: '$CLUSTER_ALERT_WEBHOOK'"
      echo "        send_resolved: true"
    fi
  } >"$DIR/alertmanager.yml"
}

# monitoring_up starts Alertmanager, then Prometheus (its configuration
# rewritten on every up: the rules are the repository's).
monitoring_up() {
  if [ -z "$(member_pid alertmanager)" ]; then
    port_open "$AM_PORT" && die "port $AM_PORT (Alertmanager) is in use"
    alertmanager_conf
    amtool check-config "$DIR/alertmanager.yml" >/dev/null || die "alertmanager.yml is invalid"
    mkdir -p "$DIR/alertmanager"
    log "alertmanager: starting on 127.0.0.1:$AM_PORT"
    # --cluster.listen-address= : one Alertmanager, no gossip port
    spawn alertmanager "$DIR/alertmanager.yml" prometheus-alertmanager --config.file="$DIR/alertmanager.yml" \
      --storage.path="$DIR/alertmanager" --web.listen-address="127.0.0.1:$AM_PORT" --cluster.listen-address=
    wait_for 30 alertmanager http_ok "http://127.0.0.1:$AM_PORT/-/ready"
  fi
  if [ -z "$(member_pid prometheus)" ]; then
    port_open "$PROM_PORT" && die "port $PROM_PORT (Prometheus) is in use"
    prometheus_conf
    promtool check config "$DIR/prometheus.yml" >/dev/null || die "prometheus.yml is invalid"
    mkdir -p "$DIR/prometheus"
    log "prometheus: starting on 127.0.0.1:$PROM_PORT"
    spawn prometheus "$DIR/prometheus.yml" prometheus --config.file="$DIR/prometheus.yml" \
      --storage.tsdb.path="$DIR/prometheus" --storage.tsdb.retention.time=2d \
      --web.listen-address="127.0.0.1:$PROM_PORT"
    wait_for 30 prometheus http_ok "http://127.0.0.1:$PROM_PORT/-/ready"
  fi
}

# ---------------------------------------------------------------- backups

# Both Patroni members archive their WAL with pgBackRest (stanza "platform")
# into one repository, $DIR/backup/repo: whichever is primary pushes
# (archive_mode=on archives on the primary only), and a standby that fell
# behind its primary's wal_keep_size fetches from it (restore_command).
# `up` creates the stanza and takes a first full backup when the repository
# has none; `backup` takes one from the current primary; `restore` is
# Patroni's documented procedure (deploy/docs/backups.md).
STANZA=platform
BACKUP_ROOT="$DIR/backup"
BACKUP_CONF="$BACKUP_ROOT/pgbackrest.conf"

backup_prepare() {
  mkdir -p "$BACKUP_ROOT"/{repo,log,lock,spool}
  local n
  for n in 1 2; do mkdir -p "$PG_ROOT/sock$n"; done
  if is_root; then
    chown -R postgres:postgres "$BACKUP_ROOT" "$PG_ROOT"/sock1 "$PG_ROOT"/sock2
  fi
  chmod 750 "$BACKUP_ROOT"
  chmod 700 "$PG_ROOT"/sock1 "$PG_ROOT"/sock2
  # The member (pg1-path, -port, -socket-path) is given on each command
  # line: archive_command names its own data directory, backups the
  # current primary.
  local conf
  conf="$("$BIN" render pgbackrest --env-file none writer=deploy/local/cluster.sh repo="$BACKUP_ROOT/repo" \
    cipher="$(backup_cipher "$BACKUP_ROOT/repo" "$DIR/backup-cipher.pass")" cipher_pass_file="$DIR/backup-cipher.pass" \
    work_dir="$BACKUP_ROOT" stanza="$STANZA" \
    note="The member (pg1-path, -port, -socket-path) is on each command line.")" || die "platform render pgbackrest failed"
  printf '%s\n' "$conf" | as_pg tee "$BACKUP_CONF" >/dev/null
  as_pg chmod 600 "$BACKUP_CONF" # it holds the passphrase
}

# pgbr N ARGS...: pgBackRest on the cluster's repository for member N (1 or
# 2), as the postgres user (the password for its socket connection in the
# environment, which runuser keeps: never on a command line, which every
# local user can read).
pgbr() {
  local n="$1"; shift
  PGPASSWORD="$POSTGRES_PASSWORD" as_pg pgbackrest --config="$BACKUP_CONF" --stanza="$STANZA" \
    --pg1-path="$PG_ROOT/data$n" --pg1-port="${PG_PORTS[$((n - 1))]}" --pg1-socket-path="$PG_ROOT/sock$n" "$@"
}

# pgbr_data N ARGS...: pgBackRest commands on member N's data directory
# alone (restore)
pgbr_data() {
  local n="$1"; shift
  as_pg pgbackrest --config="$BACKUP_CONF" --stanza="$STANZA" --pg1-path="$PG_ROOT/data$n" "$@"
}

# pgbr_repo ARGS...: pgBackRest commands on the repository alone (info)
pgbr_repo() {
  as_pg pgbackrest --config="$BACKUP_CONF" --stanza="$STANZA" "$@"
}

# primary_member: 1 or 2, the member answering 200 on /primary
primary_member() {
  local i
  for i in 0 1; do
    if curl -fsS -m 2 -o /dev/null "http://127.0.0.1:${REST_PORTS[$i]}/primary" 2>/dev/null; then
      echo $((i + 1)); return 0
    fi
  done
  return 1
}

# backup_up: the stanza, a check that WAL reaches the repository, and a
# first full backup when there is none. A cluster made before it archived
# says how to restart its members into archiving.
backup_up() {
  command -v pgbackrest >/dev/null 2>&1 || die "pgbackrest is not installed (cluster.sh install)"
  local n; n="$(primary_member)" || die "no Postgres primary: no backup"
  if [ "$(psql_primary -d postgres -tAc 'SHOW archive_mode')" != "on" ]; then
    log "pgbackrest: WARNING: the members run without WAL archiving (started before it was configured): cluster.sh down, then up (each Patroni reads its new configuration when it starts)"
    return 0
  fi
  pgbr "$n" stanza-create >/dev/null || die "pgbackrest stanza-create failed (log under $BACKUP_ROOT/log)"
  local backed_up=""
  grep -q '"label"' <<<"$(pgbr_repo info --output=json)" && backed_up=1
  if ! pgbr "$n" check >/dev/null; then
    [ -n "$backed_up" ] || die "pgbackrest check failed: WAL archiving does not work (log under $BACKUP_ROOT/log)"
    # An archive that lags after a failover must not keep 'up' from
    # starting what is down: WALArchiveFailing pages while it lasts.
    log "pgbackrest: WARNING: check failed: WAL archiving does not work right now (log under $BACKUP_ROOT/log); the members come up anyway"
  fi
  if [ -z "$backed_up" ]; then
    log "pgbackrest: no backup yet: taking the first full backup from pg$n"
    pgbr "$n" --type=full backup || die "pgbackrest backup failed (log under $BACKUP_ROOT/log)"
  fi
  log "pgbackrest: archiving to $BACKUP_ROOT/repo (stanza $STANZA)"
}

# backup_info: the backups and the primary's WAL archive (archive_status_sql)
backup_info() {
  [ -f "$BACKUP_CONF" ] || { echo "backups: none configured ($BACKUP_CONF missing: cluster.sh up)"; return 1; }
  local n; n="$(primary_member)" || { echo "backups: no Postgres primary answers"; return 1; }
  pgbr_repo info
  psql_primary -d postgres -tA -c "$(archive_status_sql)"
}

cluster_backup() { # TYPE
  local type="${1:-full}" n
  case "$type" in full|incr|diff) ;; *) die "backup type '$type': full, incr or diff" ;; esac
  n="$(primary_member)" || die "no Postgres primary answers: cluster.sh up"
  log "pgbackrest: $type backup from the primary pg$n"
  pgbr "$n" --type="$type" backup || die "pgbackrest backup failed (log under $BACKUP_ROOT/log)"
  backup_info
}

# cluster_restore [TIME]: Patroni's procedure for a restore. Everything but
# etcd (and the broker) stops; the cluster's state is removed from etcd
# (patronictl remove); pgBackRest restores member 1's data directory, to
# the latest point or to TIME ("2026-11-26 23:05:00+00"); that Postgres
# alone replays the archive, says where recovery stopped and is stopped;
# member 2's data directory is deleted; `up` then starts Patroni on member 1
# (it takes the data it finds as the new cluster, with a new timeline) and
# member 2 clones it, and the platform resumes from the database's
# positions. Check with `platform verify` before letting clients in.
cluster_restore() {
  local target="${1:-}" name
  [ -f "$BACKUP_CONF" ] || die "no pgBackRest repository under $BACKUP_ROOT"
  ensure_installed
  etcd_up
  # the primary, if one still runs, archives the segment it is writing
  # (check switches it and waits): the archive then holds all it wrote
  local n
  if n="$(primary_member)"; then
    log "restore: archiving pg$n's current WAL segment (pgbackrest check)"
    pgbr "$n" check >/dev/null 2>&1 || log "restore: WARNING: pgbackrest check failed: the archive may lack the last minute"
  fi
  log "restore: stopping HAProxy, the platform's processes and both Patroni members"
  stop_member haproxy
  while read -r name; do stop_member "$name"; done < <(members | cut -d' ' -f1)
  stop_member patroni-2
  stop_member patroni-1
  pg_orphans_down
  log "restore: removing the cluster's state from etcd (patronictl remove $SCOPE)"
  printf '%s\nYes I am aware\n' "$SCOPE" | patronictl -c "$PG_ROOT/patroni-1.yml" remove "$SCOPE" >>"$LOGS/restore.log" 2>&1 \
    || { tail -n 5 "$LOGS/restore.log" >&2; die "patronictl remove failed"; }
  local args=(--delta)
  if [ -n "$target" ]; then
    args+=(--type=time "--target=$target" --target-action=promote)
  fi
  as_pg mkdir -p "$PG_ROOT/data1"
  as_pg chmod 700 "$PG_ROOT/data1"
  log "restore: pgbackrest restore ${args[*]} into $PG_ROOT/data1"
  pgbr_data 1 "${args[@]}" restore || die "pgbackrest restore failed (log under $BACKUP_ROOT/log)"
  # Patroni's postgresql.conf in the backup names the member that was
  # primary then: this Postgres runs as member 1, alone, until it promotes,
  # on its socket only (no client reaches it before Patroni has it).
  local d="$PG_ROOT/data1" rlog="$LOGS/restore-pg1.log" i state=""
  : >"$rlog"
  if is_root; then chown postgres "$rlog"; fi
  log "restore: replaying the archive (Postgres log $rlog)"
  as_pg "$PG_BIN/pg_ctl" -D "$d" -l "$rlog" -w -t 3600 -s start -o "-c port=${PG_PORTS[0]} -c listen_addresses= \
-c unix_socket_directories=$PG_ROOT/sock1 -c hba_file=$d/pg_hba.conf -c ident_file=$d/pg_ident.conf \
-c synchronous_standby_names= -c archive_command='pgbackrest --config=$BACKUP_CONF --stanza=$STANZA --pg1-path=$d archive-push %p'" \
    || { tail -n 20 "$rlog" >&2; die "the restored Postgres did not start (recovery target not in the archive?)"; }
  for i in $(seq 1 3600); do
    state="$(PGPASSWORD="$POSTGRES_PASSWORD" as_pg "$PG_BIN/psql" -X -h "$PG_ROOT/sock1" -p "${PG_PORTS[0]}" -U postgres -d postgres \
      -tAc 'SELECT pg_is_in_recovery()' 2>/dev/null || true)"
    [ "$state" = f ] && break
    sleep 1
  done
  [ "$state" = f ] || { tail -n 20 "$rlog" >&2; die "the restored Postgres did not finish recovery"; }
  log "restore: where recovery stopped (from $rlog):"
  grep -E 'recovery stopping|last completed transaction|redo done|selected new timeline|archive recovery complete|consistent recovery state' "$rlog" | sed 's/^/    /' || true
  as_pg "$PG_BIN/pg_ctl" -D "$d" -m fast -w -t 120 -s stop || die "the restored Postgres did not stop"
  log "restore: deleting pg2's data directory: it clones the restored member"
  rm -rf "$PG_ROOT/data2"
  # pg1 alone first: with no cluster in etcd, an empty pg2 started beside it
  # would bootstrap a new, empty one and win the race
  log "restore: starting Patroni on pg1 alone: it takes the restored data as the new cluster"
  backup_prepare
  patroni_conf 0
  patroni_spawn 0
  wait_for 180 "pg1 as the primary" primary_port
  cluster_up
  log "restore: done; take a full backup (cluster.sh backup full) and check the books: eval \"\$(cluster.sh env)\"; platform verify"
}

# backup_env: what a platform process needs to read the repository
# (`pgbackrest info`: the newest backup's time on /metrics); it never writes
# pgBackRest's log files, which belong to the postgres user.
backup_env() {
  echo "PGBACKREST_CONFIG=$BACKUP_CONF"
  echo "PGBACKREST_STANZA=$STANZA"
  echo "PGBACKREST_LOG_LEVEL_FILE=off"
}

# haproxy_conf_ops: backends the stats page shows the database by (no
# client goes through them: the platform uses its multi-host DSN). Patroni's
# REST API answers 200 on /primary from the primary only and on /replica
# from a running standby: a database outage is a red row.
haproxy_conf_ops() {
  local role i
  for role in primary replica; do
    echo "backend postgres-$role"
    echo "    mode tcp"
    echo "    option httpchk GET /$role"
    echo "    http-check expect status 200"
    echo "    default-server inter 1s fall 2 rise 2"
    for i in 0 1; do
      echo "    server pg$((i + 1)) 127.0.0.1:${PG_PORTS[$i]} check port ${REST_PORTS[$i]}"
    done
  done
}

# cluster_status_ops: the backups and the WAL archive, and the log rotation
cluster_status_ops() {
  local rc=0 pid
  echo
  backup_info || rc=1
  pid="$(logs_rotation_pid)"
  echo "log rotation: ${pid:+running (pid $pid), }logs over ${LOG_MAX_MB} MB are rotated, $LOG_KEEP kept ($LOGS, $BACKUP_ROOT/log)"
  return "$rc"
}

# print_env_ops: LEDGER_SALT (`platform verify` recomputes the ledger's
# hashes with it, not only their links) and pgBackRest's configuration
print_env_ops() {
  local salt
  salt="$(sed -n 's/^LEDGER_SALT=//p' "$DIR/secrets.env" 2>/dev/null || true)"
  [ -z "$salt" ] || echo "export LEDGER_SALT='$salt'"
  echo "export PGBACKREST_CONFIG='$BACKUP_CONF'"
  echo "export PGBACKREST_STANZA='$STANZA'"
}

# ---------------------------------------------------------------- logs

# member_log_level NAME: gateways log at info (their access log: one line
# per request), the others at warn; LOG_LEVEL sets every member's.
member_log_level() {
  case "$1" in
    gateway-*) echo "${LOG_LEVEL:-info}" ;;
    *) echo "${LOG_LEVEL:-warn}" ;;
  esac
}

# Every member appends to $LOGS/NAME.log (Patroni a line a second, the
# gateways a line a request): a loop of this script (rotate-loop) copies a
# log that reached LOG_MAX_MB to NAME.log.1 (older ones shift, LOG_KEEP
# kept) and truncates it; the writers append (O_APPEND), so they go on at
# its start. pgBackRest's logs are rotated alike.
LOG_MAX_MB="${CLUSTER_LOG_MAX_MB:-20}"
LOG_KEEP=3
case "$LOG_MAX_MB" in ''|*[!0-9]*) die "CLUSTER_LOG_MAX_MB '$LOG_MAX_MB' is not a number" ;; esac
LOGS_ROTATION_PID="$RUN/logs-rotation.pidfile"   # not *.pid: not a member

logs_rotate() {
  local f k
  for f in "$LOGS"/*.log "$BACKUP_ROOT"/log/*.log; do
    [ -f "$f" ] || continue
    [ "$(stat -c %s "$f" 2>/dev/null || echo 0)" -ge $((LOG_MAX_MB * 1048576)) ] || continue
    for k in $(seq $((LOG_KEEP - 1)) -1 1); do
      [ ! -f "$f.$k" ] || mv -f "$f.$k" "$f.$((k + 1))"
    done
    cp -p "$f" "$f.1" && : >"$f"
  done
}

logs_rotation_pid() {
  local pid
  pid="$(cat "$LOGS_ROTATION_PID" 2>/dev/null || true)"
  if pid_cmdline_has "$pid" "rotate-loop $DIR"; then echo "$pid"; fi
}

logs_rotation_up() {
  [ -z "$(logs_rotation_pid)" ] || return 0
  CLUSTER_DIR="$DIR" CLUSTER_PORT_BASE="$BASE" setsid bash "$SCRIPT_DIR/cluster.sh" rotate-loop "$DIR" \
    >>"$LOGS/logs-rotation.log" 2>&1 </dev/null &
  echo $! >"$LOGS_ROTATION_PID"
}

logs_rotation_down() {
  local pid; pid="$(logs_rotation_pid)"
  # its session: the loop and its sleep
  [ -z "$pid" ] || kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  rm -f "$LOGS_ROTATION_PID"
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
    grep -q '^qdisc noqueue 0: root' <<<"$(tc qdisc show dev lo)" || die "fault: lo has a root qdisc that this cluster did not add: $(tc qdisc show dev lo | head -n1)"
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
# FAKETIME_DISABLE_SHM is honoured from libfaketime 0.9.11 only; Debian's
# 0.9.10 makes every preloaded process whose environment names no shared
# semaphore create /faketime_sem_<pid> and export its name, and each forked
# child inherits "I created it": the postmaster's first backend to exit
# unlinked it, every later exec (archive_command's sh, pgbackrest) found
# the name stale, created its own unless that pid's name was taken — and
# leaked ones collect in /dev/shm (7,200 after a day of clusters here, a
# fifth of the pids) — else exited 1: WAL archiving then failed
# three times running and pgbackrest check timed out (a nemesis run's first
# up). The wrapper takes the name of its own pid for a moment, so the
# postmaster creates nothing and exports nothing (its children then
# create their own or, on a taken name, run without: never a stale name).
pg_clock_bin() {
  local n="$1" lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 dir="$PG_ROOT/bin$1" f
  if [ ! -f "$lib" ]; then echo "$PG_BIN"; return 0; fi
  mkdir -p "$dir"
  for f in "$PG_BIN"/*; do [ "$(basename "$f")" = postgres ] || ln -sfn "$f" "$dir/$(basename "$f")"; done
  [ -f "$RUN/pg-$n.clock" ] || echo "+0" >"$RUN/pg-$n.clock"
  cat >"$dir/postgres" <<WRAP
#!/bin/sh
# Written by deploy/local/cluster.sh: Postgres under libfaketime (fault clock)
# /dev/shm/sem.faketime_sem_<pid> taken until libfaketime has loaded in the
# exec'd postgres (pg_clock_bin says why); the remover is no child of it
m=/dev/shm/sem.faketime_sem_\$\$
if [ ! -e "\$m" ] && : >"\$m" 2>/dev/null; then ( (sleep 5; rm -f "\$m") </dev/null >/dev/null 2>&1 & ); fi
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
  echo alertmanager; echo prometheus
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
    broker) port_open "$BROKER_PORT" && echo -n listening || echo -n "not listening"
      http_ok "http://127.0.0.1:$BROKER_METRICS/metrics" && echo ", metrics answer" || echo ", metrics do not answer" ;;
    prometheus) http_ok "http://127.0.0.1:$PROM_PORT/-/ready" && echo ready || echo "not ready" ;;
    alertmanager) http_ok "http://127.0.0.1:$AM_PORT/-/ready" && echo ready || echo "not ready" ;;
    haproxy) http_ok "http://127.0.0.1:$PROXY_PORT/api/platform/version" && echo "API answers" || echo "API does not answer" ;;
    gateway-*) line="$(members | grep "^$name ")"; http_ok "http://$(echo "$line" | cut -d' ' -f2)/api/platform/version" && echo "answers" || echo "does not answer" ;;
    relay-*) line="$(members | grep "^$name ")"; http_ok "http://$(echo "$line" | cut -d' ' -f3)/metrics" && echo "metrics answer (one of the two holds the publish lock)" || echo "metrics do not answer" ;;
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
  echo "Prometheus: http://127.0.0.1:$PROM_PORT/alerts  Alertmanager: http://127.0.0.1:$AM_PORT/"
  echo "metrics (job: addresses):"
  local job
  for job in platform-gateway platform-relay platform-consumer platform-broker patroni; do
    echo "  $job: $(metrics_targets "$job" | tr '\n' ' ')"
  done
  cluster_status_ops || rc=1
  return "$rc"
}

print_env() {
  echo "export CLUSTER_DIR='$DIR'"
  echo "export CLUSTER_PORT_BASE='$BASE'"
  echo "export PLATFORM_URL='http://127.0.0.1:$PROXY_PORT'"
  echo "export GATEWAY_URLS='http://127.0.0.1:${GW_PORTS[0]},http://127.0.0.1:${GW_PORTS[1]}'"
  echo "export ETCD_URL='http://127.0.0.1:$ETCD_CLIENT'"
  echo "export PATRONI_SCOPE='$SCOPE'"
  echo "export DATABASE_URL='$DSN'"
  echo "export MIGRATE_DATABASE_URL='$MIGRATE_DSN'"
  echo "export ADMIN_DATABASE_URL='$ADMIN_DSN'"
  echo "export PATRONI_URLS='http://127.0.0.1:${REST_PORTS[0]},http://127.0.0.1:${REST_PORTS[1]}'"
  echo "export PATRONI_REST_USERNAME='patroni'"
  echo "export PATRONI_REST_PASSWORD='$PATRONI_REST_PASSWORD'"
  echo "export KAFKA_BROKERS='127.0.0.1:$BROKER_PORT'"
  echo "export CLICKHOUSE_ADDR='$CH_ADDR'"
  echo "export PROMETHEUS_URL='http://127.0.0.1:$PROM_PORT'"
  echo "export ALERTMANAGER_URL='http://127.0.0.1:$AM_PORT'"
  local name addr
  while read -r name _ addr _; do
    echo "# metrics of $name: http://$addr/metrics"
  done < <(members)
  echo "# metrics of broker: http://127.0.0.1:$BROKER_METRICS/metrics"
  local i
  for i in 0 1; do echo "# metrics of patroni-$((i + 1)): http://127.0.0.1:${REST_PORTS[$i]}/metrics"; done
  print_env_ops
}

cluster_up() {
  ensure_installed
  mkdir -p "$DIR" "$RUN" "$LOGS"
  etcd_up
  logs_rotation_up
  backup_prepare
  patroni_up
  backup_up
  platform_up
  haproxy_up
  monitoring_up
  log "cluster is up: API http://127.0.0.1:$PROXY_PORT, alerts http://127.0.0.1:$PROM_PORT/alerts"
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
    if pid_cmdline_has "$pid" "$PG_ROOT/data$n"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
}

cluster_down() {
  local name
  stop_member prometheus
  stop_member alertmanager
  fault_clear
  stop_member haproxy
  while read -r name; do stop_member "$name"; done < <(members | cut -d' ' -f1; scaled_in)
  stop_member broker
  # replica first, so the primary does not wait for it on the way down
  stop_member patroni-2
  stop_member patroni-1
  pg_orphans_down
  stop_member etcd
  logs_rotation_down
  log "cluster is down (data kept in $DIR)"
}

case "${1:-}" in
  up|down|status|env|running|addrs|fault|backup|backup-info|restore|rotate-loop) groups_load ;;
esac
case "${1:-}" in
  up) auth_load create; mkdir -p "$DIR"; settings_save; cluster_up ;;
  down) cluster_down ;;
  status) auth_load; cluster_status ;;
  env) auth_load; print_env ;;
  install) ensure_installed ;;
  backup) auth_load; find_pg_bin; cluster_backup "${2:-full}" ;;
  backup-info) auth_load; find_pg_bin; backup_info ;;
  restore) auth_load; cluster_restore "${2:-}" ;;
  running) [ -n "$(member_pid patroni-1)$(member_pid patroni-2)" ] ;;
  rotate-loop) while :; do logs_rotate; sleep 60; done ;;
  addrs) addr_layout; print_addrs ;;
  fault) addr_layout; shift; fault_cmd "$@" ;;
  *) echo "usage: $0 up|down|status|env|install|backup [full|incr|diff]|backup-info|restore [TIME]|running|addrs|fault" >&2; exit 2 ;;
esac
