#!/usr/bin/env bash
# Local stack: private PostgreSQL and ClickHouse instances under $DATA_DIR,
# on their own loopback ports (never the system defaults 5432 / 9000 / 8123).
#
#   deploy/local/stack.sh up       install if missing, start (idempotent)
#   deploy/local/stack.sh down     stop both (idempotent)
#   deploy/local/stack.sh status   say whether each is running
#   deploy/local/stack.sh env      print export lines, for: eval "$(deploy/local/stack.sh env)"
#   deploy/local/stack.sh backup [full|incr|diff]   a pgBackRest backup (default full)
#   deploy/local/stack.sh backup-info                the backups and the WAL archive's lag
#
# PostgreSQL archives its WAL continuously with pgBackRest (stanza
# "platform") into a repository under $DATA_DIR/backup; `up` creates the
# stanza and a first full backup when the repository has none.
#
# Environment (all optional):
#   DATA_DIR      default <repo>/.data (made absolute)
#   PG_PORT       default 55432
#   CH_PORT       default 19000   (ClickHouse native protocol)
#   CH_HTTP_PORT  default 18123   (ClickHouse HTTP)
#
# The system services that the Debian packages install are never started or
# touched; only the private instances under $DATA_DIR are managed here.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd -P)"

DATA_DIR="${DATA_DIR:-$REPO_ROOT/.data}"
# the binary renders the pgBackRest configuration (make stack builds it)
PLATFORM_BIN="${PLATFORM_BIN:-$REPO_ROOT/bin/platform}"
case "$DATA_DIR" in
  /*) ;;
  *) DATA_DIR="$PWD/$DATA_DIR" ;;
esac
PG_PORT="${PG_PORT:-55432}"
CH_PORT="${CH_PORT:-19000}"
CH_HTTP_PORT="${CH_HTTP_PORT:-18123}"
PG_DB="platform"

PG_DIR="$DATA_DIR/postgres"            # may be a symlink, see pg_prepare_dir
BACKUP_DIR="$DATA_DIR/backup"          # the pgBackRest repository; may be a symlink too
STANZA="platform"
# Seconds after which a WAL segment with any change is archived even when
# not full: the most a restore to the latest point can lose.
ARCHIVE_TIMEOUT="${ARCHIVE_TIMEOUT:-60}"
CH_DIR="$DATA_DIR/clickhouse"
CH_PID="$CH_DIR/clickhouse.pid"
CH_CONFIG="$CH_DIR/config.xml"

LOG_TAG=stack
# shellcheck source=deploy/local/lib.sh
. "$SCRIPT_DIR/lib.sh"

for p in "$PG_PORT" "$CH_PORT" "$CH_HTTP_PORT"; do
  case "$p" in
    ''|*[!0-9]*) die "port '$p' is not a number" ;;
    5432|9000|8123|9009) die "port $p is a system default port; choose another (PG_PORT/CH_PORT/CH_HTTP_PORT)" ;;
  esac
done

# -------------------------------------------------------------- PostgreSQL

pg_ensure_installed() {
  find_pg_bin
  if [ -z "$PG_BIN" ] || ! { [ -x "$PG_BIN/pgbench" ] || command -v pgbench >/dev/null 2>&1; }; then
    log "PostgreSQL server not found: installing"
    apt_install postgresql postgresql-contrib
    find_pg_bin
    [ -n "$PG_BIN" ] || die "PostgreSQL server binaries still missing under /usr/lib/postgresql/*/bin"
  fi
  if is_root && ! id postgres >/dev/null 2>&1; then
    die "OS user 'postgres' does not exist (PostgreSQL refuses to run as root)"
  fi
}

# Real (symlink-resolved) data directory of the private cluster.
pg_data() {
  if [ -L "$PG_DIR" ]; then readlink -f "$PG_DIR"; else printf '%s\n' "$PG_DIR"; fi
}

# Make sure the postgres user can reach the data directory. If some parent of
# DATA_DIR is not traversable for it (e.g. a clone under /root, mode 700), the
# cluster lives under /var/lib/postgresql instead, and $DATA_DIR/postgres is a
# symlink to it. Permissions of directories we did not create are never changed.
pg_prepare_dir() {
  mkdir -p "$DATA_DIR"
  if [ -e "$PG_DIR" ] || [ -L "$PG_DIR" ]; then
    [ -d "$(pg_data)" ] || die "$PG_DIR points to $(pg_data), which does not exist; remove $PG_DIR to start afresh"
    return 0
  fi
  is_root || { mkdir -p "$PG_DIR"; chmod 700 "$PG_DIR"; return 0; }
  if runuser -u postgres -- test -x "$DATA_DIR" 2>/dev/null; then
    mkdir -p "$PG_DIR"
  else
    local home hash alt
    home="$(getent passwd postgres | cut -d: -f6)"
    [ -n "$home" ] && [ -d "$home" ] || home=/var/lib/postgresql
    hash="$(printf '%s' "$DATA_DIR" | sha256sum | cut -c1-12)"
    alt="$home/platform-$hash"
    log "postgres user cannot traverse to $DATA_DIR; cluster goes to $alt (symlinked from $PG_DIR)"
    mkdir -p "$alt"
    ln -s "$alt" "$PG_DIR"
  fi
  local real; real="$(pg_data)"
  chown postgres:postgres "$real"
  chmod 700 "$real"
  runuser -u postgres -- test -w "$real" || die "postgres user cannot write $real"
}

# The pgBackRest repository, like the cluster, must be reachable by the
# postgres user (archive_command runs as it): under /var/lib/postgresql,
# symlinked from $BACKUP_DIR, when DATA_DIR is not traversable for it.
backup_dir() {
  if [ -L "$BACKUP_DIR" ]; then readlink -f "$BACKUP_DIR"; else printf '%s\n' "$BACKUP_DIR"; fi
}

backup_prepare_dir() {
  if [ ! -e "$BACKUP_DIR" ] && [ ! -L "$BACKUP_DIR" ]; then
    if ! is_root || runuser -u postgres -- test -x "$DATA_DIR" 2>/dev/null; then
      mkdir -p "$BACKUP_DIR"
    else
      local home hash alt
      home="$(getent passwd postgres | cut -d: -f6)"
      [ -n "$home" ] && [ -d "$home" ] || home=/var/lib/postgresql
      hash="$(printf '%s' "$DATA_DIR" | sha256sum | cut -c1-12)"
      alt="$home/platform-$hash-backup"
      mkdir -p "$alt"
      ln -s "$alt" "$BACKUP_DIR"
    fi
  fi
  local real; real="$(backup_dir)"
  mkdir -p "$real/repo" "$real/log" "$real/lock" "$real/spool"
  if is_root; then chown -R postgres:postgres "$real"; fi
  chmod 750 "$real"
}

pgbackrest_ensure_installed() {
  command -v pgbackrest >/dev/null 2>&1 || apt_install pgbackrest
}

# pgbackrest_run ARGS...: pgBackRest on this stack's repository, as postgres.
pgbackrest_run() {
  as_pg pgbackrest --config="$(backup_dir)/pgbackrest.conf" --stanza="$STANZA" "$@"
}

# pg_sockdir DATA: the cluster's Unix socket directory: inside the data dir,
# or /tmp when that path would exceed the 107-byte sun_path limit
# (pgBackRest connects through the socket).
pg_sockdir() {
  if [ "$(( ${#1} + 20 ))" -gt 100 ]; then printf '/tmp\n'; else printf '%s\n' "$1"; fi
}

# backup_write_conf: pgbackrest.conf, rendered by the binary from the one
# pgBackRest template (`platform render pgbackrest`), encrypted with the
# passphrase DATA_DIR/secrets/backup_cipher_pass: back it up apart from the
# repository, which cannot be read without it.
backup_write_conf() {
  local d real conf pass="$DATA_DIR/secrets/backup_cipher_pass"
  [ -x "$PLATFORM_BIN" ] || die "no platform binary at $PLATFORM_BIN (make build, or set PLATFORM_BIN)"
  d="$(pg_data)"
  real="$(backup_dir)"
  conf="$("$PLATFORM_BIN" render pgbackrest --env-file none writer=deploy/local/stack.sh repo="$real/repo" \
    cipher="$(backup_cipher "$real/repo" "$pass")" cipher_pass_file="$pass" work_dir="$real" stanza="$STANZA" \
    pg_path="$d" pg_port="$PG_PORT" pg_socket="$(pg_sockdir "$d")")" || die "platform render pgbackrest failed"
  printf '%s\n' "$conf" | as_pg tee "$real/pgbackrest.conf" >/dev/null
  as_pg chmod 600 "$real/pgbackrest.conf" # it holds the passphrase
}

backup_up() {
  local psql=("$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "$PG_DB" -tA)
  if [ "$("${psql[@]}" -c 'SHOW archive_mode')" != "on" ]; then
    log "pgbackrest: WARNING: postgres was started before WAL archiving was configured; nothing is archived until it restarts (deploy/local/stack.sh down && up)"
    return 0
  fi
  pgbackrest_run stanza-create >/dev/null || die "pgbackrest stanza-create failed (log under $(backup_dir)/log)"
  pgbackrest_run check >/dev/null || die "pgbackrest check failed: WAL archiving does not work (log under $(backup_dir)/log)"
  if ! grep -q '"label"' <<<"$(pgbackrest_run info --output=json)"; then
    log "pgbackrest: no backup yet: taking the first full backup"
    pgbackrest_run --type=full backup || die "pgbackrest backup failed"
  fi
  log "pgbackrest: archiving to $(backup_dir)/repo (stanza $STANZA)"
}

backup_info() {
  pgbackrest_run info
  local psql=("$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "$PG_DB" -tA)
  "${psql[@]}" -c "$(archive_status_sql)"
}

# pid of the running private postmaster, empty if none
pg_running_pid() {
  local d pid
  d="$(pg_data)"
  [ -f "$d/postmaster.pid" ] || return 0
  pid="$(head -n1 "$d/postmaster.pid" 2>/dev/null || true)"
  # a live postgres whose command line names this data dir (pids are reused
  # after a reboot, so a stale postmaster.pid may point at anything)
  if [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" = "postgres" ] && pid_cmdline_has "$pid" "$d"; then
    printf '%s\n' "$pid"
  fi
}

pg_write_conf() {
  local d sockdir conf
  d="$(pg_data)"
  # Unix socket inside the data dir (pg_sockdir).
  sockdir="$(pg_sockdir "$d")"
  conf="$d/platform.conf"
  as_pg tee "$conf" >/dev/null <<EOF
# Written by deploy/local/stack.sh on every 'up'; edits are overwritten.
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$sockdir'
max_connections = 400
shared_buffers = 512MB
work_mem = 16MB
maintenance_work_mem = 128MB
effective_cache_size = 2GB
# durability stays on
fsync = on
synchronous_commit = on
full_page_writes = on
# continuous WAL archiving with pgBackRest (deploy/docs/backups.md)
wal_level = replica
max_wal_senders = 0
archive_mode = on
archive_command = 'pgbackrest --config=$(backup_dir)/pgbackrest.conf --stanza=$STANZA archive-push %p'
archive_timeout = $ARCHIVE_TIMEOUT
max_wal_size = 2GB
checkpoint_timeout = 15min
wal_compression = on
# short OLTP statements: JIT compilation costs more than it saves
jit = off
# a few rows take an update per transfer: visit each database often enough
# for their per-table autovacuum thresholds (migration 0134) to matter
autovacuum_naptime = 10s
logging_collector = off
log_min_duration_statement = 1000
# DDL with its time: the log names T for a restore (deploy/docs/backups.md)
log_statement = ddl
log_line_prefix = '%m [%p] %q%u@%d '
timezone = 'UTC'
EOF
  if ! grep -q "^include_if_exists = 'platform.conf'" "$d/postgresql.conf"; then
    printf "\ninclude_if_exists = 'platform.conf'\n" | as_pg tee -a "$d/postgresql.conf" >/dev/null
  fi
}

pg_up() {
  pg_ensure_installed
  pgbackrest_ensure_installed
  pg_prepare_dir
  backup_prepare_dir
  backup_write_conf
  local d; d="$(pg_data)"
  if [ ! -f "$d/PG_VERSION" ]; then
    log "postgres: initdb in $d ($PG_BIN)"
    as_pg "$PG_BIN/initdb" -D "$d" --auth=trust -U postgres --encoding=UTF8 --locale=C >"$DATA_DIR/postgres-initdb.log" 2>&1 \
      || { cat "$DATA_DIR/postgres-initdb.log" >&2; die "initdb failed (remove $PG_DIR before retrying)"; }
  else
    local have want
    have="$(cat "$d/PG_VERSION")"
    want="$(basename "$(dirname "$PG_BIN")")"
    if [ "$have" != "$want" ]; then
      local alt="/usr/lib/postgresql/$have/bin"
      [ -x "$alt/postgres" ] || die "cluster in $d is PostgreSQL $have but only $want is installed; remove $PG_DIR to start afresh"
      PG_BIN="$alt"
    fi
  fi

  local pid running_port; pid="$(pg_running_pid)"
  if [ -n "$pid" ]; then
    running_port="$(sed -n 4p "$d/postmaster.pid" 2>/dev/null || true)"
    if [ -n "$running_port" ] && [ "$running_port" != "$PG_PORT" ]; then
      log "postgres: running on port $running_port but PG_PORT=$PG_PORT: restarting"
      pg_down
      pid=""
    fi
  fi
  if [ -n "$pid" ]; then
    log "postgres: already running (pid $pid)"
  else
    if [ -f "$d/postmaster.pid" ]; then
      log "postgres: removing stale postmaster.pid"
      rm -f "$d/postmaster.pid"
    fi
    if port_open "$PG_PORT"; then
      die "port $PG_PORT is in use by another process; set PG_PORT to a free port"
    fi
    pg_write_conf
    log "postgres: starting on 127.0.0.1:$PG_PORT (log $d/postgres.log)"
    as_pg "$PG_BIN/pg_ctl" -D "$d" -l "$d/postgres.log" -w -t 60 -s start \
      || { tail -n 30 "$d/postgres.log" >&2 || true; die "postgres did not start"; }
  fi

  local psql=("$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1)
  if [ "$("${psql[@]}" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" != "1" ]; then
    log "postgres: creating database $PG_DB"
    "${psql[@]}" -d postgres -c "CREATE DATABASE $PG_DB OWNER postgres"
  fi
  "${psql[@]}" -d "$PG_DB" -tAc 'SELECT 1' >/dev/null || die "cannot connect to database $PG_DB on port $PG_PORT"
  backup_up
  log "postgres: ready"
}

pg_down() {
  [ -e "$PG_DIR" ] || { log "postgres: not initialised"; return 0; }
  local d pid; d="$(pg_data)"
  pid="$(pg_running_pid)"
  if [ -z "$pid" ]; then
    log "postgres: not running"
    return 0
  fi
  find_pg_bin
  local bin="$PG_BIN"
  [ -f "$d/PG_VERSION" ] && [ -x "/usr/lib/postgresql/$(cat "$d/PG_VERSION")/bin/pg_ctl" ] && bin="/usr/lib/postgresql/$(cat "$d/PG_VERSION")/bin"
  if [ -n "$bin" ]; then
    log "postgres: stopping (pid $pid)"
    as_pg "$bin/pg_ctl" -D "$d" -m fast -w -t 60 -s stop || true
  fi
  if pid_cmdline_has "$pid" postgres; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do pid_cmdline_has "$pid" postgres || break; sleep 0.5; done
  fi
  pid_cmdline_has "$pid" postgres && die "postgres (pid $pid) did not stop"
  log "postgres: stopped"
}

pg_status() {
  local pid=""
  { [ -e "$PG_DIR" ] && pid="$(pg_running_pid)"; } || true
  if [ -n "$pid" ]; then
    local port; port="$(sed -n 4p "$(pg_data)/postmaster.pid" 2>/dev/null || true)"
    echo "postgres:   running (pid $pid) on 127.0.0.1:${port:-$PG_PORT}, data $(pg_data)"
    return 0
  fi
  echo "postgres:   stopped (data $PG_DIR)"
  return 1
}

# -------------------------------------------------------------- ClickHouse

CH_SERVER=""
CH_CLIENT=""
find_ch() {
  CH_SERVER="$(command -v clickhouse-server 2>/dev/null || true)"
  [ -n "$CH_SERVER" ] || { [ -x /usr/sbin/clickhouse-server ] && CH_SERVER=/usr/sbin/clickhouse-server; } || true
  CH_CLIENT="$(command -v clickhouse-client 2>/dev/null || true)"
}

ch_ensure_installed() {
  find_ch
  if [ -z "$CH_SERVER" ] || [ -z "$CH_CLIENT" ]; then
    log "ClickHouse not found: installing"
    apt_install clickhouse-server clickhouse-client
    find_ch
    if [ -z "$CH_SERVER" ] || [ -z "$CH_CLIENT" ]; then die "clickhouse-server/clickhouse-client still missing after install"; fi
  fi
}

ch_running_pid() {
  [ -f "$CH_PID" ] || return 0
  local pid; pid="$(head -n1 "$CH_PID" 2>/dev/null || true)"
  if pid_cmdline_has "$pid" "$CH_CONFIG"; then
    printf '%s\n' "$pid"
  fi
}

# ch_conf_value TAG: value of <TAG> in the written config (= the running one)
ch_conf_value() {
  sed -n "s:.*<$1>\\([0-9]*\\)</$1>.*:\\1:p" "$CH_CONFIG" 2>/dev/null | head -n1 || true
}

ch_query() {
  "$CH_CLIENT" --host 127.0.0.1 --port "$CH_PORT" "$@"
}

ch_write_conf() {
  mkdir -p "$CH_DIR"/{data,tmp,user_files,format_schemas,log}
  # Config for ClickHouse 18.16 (Debian); also fine for newer servers. Every
  # path stays under $CH_DIR; loopback only; no interserver/mysql/etc. ports.
  cat >"$CH_CONFIG" <<EOF
<?xml version="1.0"?>
<!-- Written by deploy/local/stack.sh on every 'up'; edits are overwritten. -->
<yandex>
    <logger>
        <level>warning</level>
        <log>$CH_DIR/log/clickhouse-server.log</log>
        <errorlog>$CH_DIR/log/clickhouse-server.err.log</errorlog>
        <size>100M</size>
        <count>3</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>$CH_PORT</tcp_port>
    <http_port>$CH_HTTP_PORT</http_port>
    <path>$CH_DIR/data/</path>
    <tmp_path>$CH_DIR/tmp/</tmp_path>
    <user_files_path>$CH_DIR/user_files/</user_files_path>
    <format_schema_path>$CH_DIR/format_schemas/</format_schema_path>
    <users_config>$CH_DIR/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <umask>027</umask>
    <max_connections>4096</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>100</max_concurrent_queries>
    <uncompressed_cache_size>1073741824</uncompressed_cache_size>
    <mark_cache_size>1073741824</mark_cache_size>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
    <mlock_executable>false</mlock_executable>
</yandex>
EOF
  cat >"$CH_DIR/users.xml" <<'EOF'
<?xml version="1.0"?>
<!-- Written by deploy/local/stack.sh on every 'up'; edits are overwritten. -->
<yandex>
    <profiles>
        <default>
            <max_memory_usage>4000000000</max_memory_usage>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
        </default>
        <readonly>
            <readonly>1</readonly>
        </readonly>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
EOF
}

ch_up() {
  ch_ensure_installed
  mkdir -p "$CH_DIR"
  local pid; pid="$(ch_running_pid)"
  if [ -n "$pid" ]; then
    local port http
    port="$(ch_conf_value tcp_port)"
    http="$(ch_conf_value http_port)"
    if [ "$port" != "$CH_PORT" ] || [ "$http" != "$CH_HTTP_PORT" ]; then
      log "clickhouse: running on ports $port/$http but CH_PORT=$CH_PORT CH_HTTP_PORT=$CH_HTTP_PORT: restarting"
      ch_down
      pid=""
    fi
  fi
  if [ -n "$pid" ]; then
    log "clickhouse: already running (pid $pid)"
  else
    rm -f "$CH_PID"
    port_open "$CH_PORT" && die "port $CH_PORT is in use by another process; set CH_PORT to a free port"
    port_open "$CH_HTTP_PORT" && die "port $CH_HTTP_PORT is in use by another process; set CH_HTTP_PORT to a free port"
    ch_write_conf
    log "clickhouse: starting on 127.0.0.1:$CH_PORT (http $CH_HTTP_PORT, log $CH_DIR/log/)"
    # ClickHouse 18.16 runs fine as root; --daemon forks and writes the pid file.
    (cd "$CH_DIR" && "$CH_SERVER" --config-file="$CH_CONFIG" --daemon --pid-file="$CH_PID" \
        >>"$CH_DIR/log/stdout.log" 2>&1 </dev/null) \
      || { tail -n 30 "$CH_DIR/log/stdout.log" >&2 || true; die "clickhouse-server failed to start"; }
  fi

  printf '[stack] clickhouse: waiting for 127.0.0.1:%s ' "$CH_PORT"
  local i
  for i in $(seq 1 120); do
    if ch_query -q 'SELECT 1' >/dev/null 2>&1; then
      printf ' ok\n'
      log "clickhouse: ready ($(ch_query -q 'SELECT version()' 2>/dev/null))"
      return 0
    fi
    if [ "$i" -gt 4 ] && [ -z "$(ch_running_pid)" ]; then
      printf ' died\n'
      tail -n 30 "$CH_DIR/log/clickhouse-server.err.log" >&2 2>/dev/null || true
      tail -n 10 "$CH_DIR/log/stdout.log" >&2 2>/dev/null || true
      die "clickhouse-server exited; see $CH_DIR/log/"
    fi
    printf '.'
    sleep 0.5
  done
  printf ' timeout\n'
  tail -n 30 "$CH_DIR/log/clickhouse-server.err.log" >&2 2>/dev/null || true
  die "clickhouse did not answer on 127.0.0.1:$CH_PORT within 60 s"
}

ch_down() {
  local pid; pid="$(ch_running_pid)"
  if [ -z "$pid" ]; then
    rm -f "$CH_PID"
    log "clickhouse: not running"
    return 0
  fi
  log "clickhouse: stopping (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for i in $(seq 1 60); do
    pid_cmdline_has "$pid" "$CH_CONFIG" || break
    sleep 0.5
  done
  if pid_cmdline_has "$pid" "$CH_CONFIG"; then
    log "clickhouse: still running after 30 s, sending KILL"
    kill -KILL "$pid" 2>/dev/null || true
    for i in $(seq 1 20); do pid_cmdline_has "$pid" "$CH_CONFIG" || break; sleep 0.5; done
  fi
  pid_cmdline_has "$pid" "$CH_CONFIG" && die "clickhouse (pid $pid) did not stop"
  rm -f "$CH_PID"
  log "clickhouse: stopped"
}

ch_status() {
  local pid; pid="$(ch_running_pid)"
  if [ -n "$pid" ]; then
    local port http
    port="$(ch_conf_value tcp_port)"
    http="$(ch_conf_value http_port)"
    echo "clickhouse: running (pid $pid) on 127.0.0.1:${port:-$CH_PORT} (http ${http:-$CH_HTTP_PORT}), data $CH_DIR"
    return 0
  fi
  echo "clickhouse: stopped (data $CH_DIR)"
  return 1
}

# -------------------------------------------------------------- commands

print_env() {
  echo "export DATABASE_URL='postgres://postgres@127.0.0.1:$PG_PORT/$PG_DB?sslmode=disable'"
  echo "export CLICKHOUSE_ADDR='127.0.0.1:$CH_PORT'"
  echo "export DATA_DIR='$DATA_DIR'"
}

# browser_ensure_installed installs what the tests that look at pages and
# documents need: Debian's Chromium (pay page, admin stream, widget) and
# poppler-utils (pdftotext and pdftoppm for the constitution PDF).
browser_ensure_installed() {
  local missing=()
  if command -v chromium >/dev/null 2>&1; then
    log "chromium: $(chromium --version 2>/dev/null | head -n1)"
  else
    missing+=(chromium)
  fi
  if command -v pdftotext >/dev/null 2>&1 && command -v pdftoppm >/dev/null 2>&1; then
    log "poppler-utils: $(pdftotext -v 2>&1 | head -n1)"
  else
    missing+=(poppler-utils)
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    apt_install "${missing[@]}"
  fi
}

cmd="${1:-}"
case "$cmd" in
  browser)
    browser_ensure_installed
    ;;
  up)
    log "data dir $DATA_DIR"
    mkdir -p "$DATA_DIR"
    pg_up
    ch_up
    log "stack is up; environment:"
    print_env
    ;;
  down)
    ch_down
    pg_down
    ;;
  status)
    rc=0
    pg_status || rc=1
    ch_status || rc=1
    if [ -e "$PG_DIR" ] && [ -n "$(pg_running_pid)" ] && [ -f "$(backup_dir)/pgbackrest.conf" ]; then
      find_pg_bin
      backup_info || rc=1
    fi
    exit "$rc"
    ;;
  env)
    print_env
    ;;
  backup)
    type="${2:-full}"
    case "$type" in full|incr|diff) ;; *) die "backup type '$type': full, incr or diff" ;; esac
    if [ ! -e "$PG_DIR" ] || [ -z "$(pg_running_pid)" ]; then die "postgres is not running: deploy/local/stack.sh up"; fi
    find_pg_bin
    log "pgbackrest: $type backup"
    pgbackrest_run --type="$type" backup
    backup_info
    ;;
  backup-info)
    if [ ! -e "$PG_DIR" ] || [ -z "$(pg_running_pid)" ]; then die "postgres is not running: deploy/local/stack.sh up"; fi
    find_pg_bin
    backup_info
    ;;
  *)
    echo "usage: $0 up|down|status|env|browser|backup [full|incr|diff]|backup-info" >&2
    exit 2
    ;;
esac
