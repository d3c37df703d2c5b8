# Helpers shared by deploy/local/stack.sh and deploy/local/cluster.sh
# (sourced, not run). LOG_TAG names the script in its messages.

export DEBIAN_FRONTEND=noninteractive
APT_UPDATED=0

log()  { printf '[%s] %s\n' "${LOG_TAG:-stack}" "$*"; }
die()  { printf '[%s] ERROR: %s\n' "${LOG_TAG:-stack}" "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" -eq 0 ]; }

apt_install() {
  is_root || die "need root to apt-get install $*"
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install $* by hand"
  if [ "$APT_UPDATED" -eq 0 ]; then
    log "apt-get update"
    apt-get update -q </dev/null || die "apt-get update failed"
    APT_UPDATED=1
  fi
  log "apt-get install -y $*"
  apt-get install -y -q --no-install-recommends "$@" </dev/null || die "apt-get install $* failed"
}

# port_open PORT: something accepts TCP connections on 127.0.0.1:PORT
port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pid_cmdline_has PID STRING: process PID is alive and its command line contains STRING
pid_cmdline_has() {
  local pid="$1" needle="$2" cmd
  case "$pid" in ''|*[!0-9]*) return 1 ;; esac
  [ -r "/proc/$pid/cmdline" ] || return 1
  cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
  [[ "$cmd" == *"$needle"* ]]
}

PG_BIN=""
find_pg_bin() {
  local d best="" bestv=0 v
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/postgres" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] || continue
    v="$(basename "$(dirname "$d")")"
    v="${v%%.*}"
    case "$v" in ''|*[!0-9]*) continue ;; esac
    if [ "$v" -gt "$bestv" ]; then bestv="$v"; best="$d"; fi
  done
  PG_BIN="$best"
}

# Run a command as the OS user that owns the PostgreSQL data.
as_pg() {
  if is_root; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}
