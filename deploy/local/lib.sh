# shellcheck shell=bash
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

# PG_BIN: the newest PostgreSQL's bin directory (find_pg_bin), for the
# scripts that source this file
PG_BIN=""
find_pg_bin() {
  local d best="" bestv=0 v
  for d in /usr/lib/postgresql/*/bin; do
    if [ ! -x "$d/postgres" ] || [ ! -x "$d/initdb" ] || [ ! -x "$d/pg_ctl" ]; then continue; fi
    v="$(basename "$(dirname "$d")")"
    v="${v%%.*}"
    case "$v" in ''|*[!0-9]*) continue ;; esac
    if [ "$v" -gt "$bestv" ]; then bestv="$v"; best="$d"; fi
  done
  # shellcheck disable=SC2034 # read by the scripts that source this file
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

# archive_status_sql: a query for one line on a primary's WAL archive: the
# last segment archived and when, the segment being written, how far the
# archive is behind the current WAL position (bytes written after the end of
# the last archived segment: at most one segment, until archive_timeout
# switches it, when all is well; left out when the last file archived is a
# backup's or timeline's history file), the segments waiting for archive_command
# (their .ready files) and the age of the oldest, which is the lag: an idle
# database with nothing pending lags 0 s however long ago it last archived.
archive_status_sql() {
  cat <<'SQL'
SELECT 'archive: last archived ' || coalesce(a.last_archived_wal, 'none') ||
       ' at ' || coalesce(to_char(a.last_archived_time, 'YYYY-MM-DD HH24:MI:SS TZ'), '-') ||
       ', current ' || pg_walfile_name(pg_current_wal_lsn()) ||
       coalesce(', unarchived ' || pg_size_pretty(CASE WHEN a.last_archived_wal ~ '^[0-9A-F]{24}$' THEN greatest(pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') -
           (('x' || substr(a.last_archived_wal, 9, 8))::bit(32)::bigint * 4294967296 +
            (('x' || substr(a.last_archived_wal, 17, 8))::bit(32)::bigint + 1) * pg_size_bytes(current_setting('wal_segment_size'))), 0) END),
         '') ||
       ', pending ' || r.n || ' segment(s)' ||
       ', lag ' || CASE WHEN r.n = 0 THEN '0 s' ELSE round(extract(epoch FROM now() - r.oldest))::text || ' s' END ||
       ', failed ' || a.failed_count ||
       coalesce(' (last ' || a.last_failed_wal || ' at ' || to_char(a.last_failed_time, 'YYYY-MM-DD HH24:MI:SS TZ') || ')', '')
  FROM pg_stat_archiver a,
       (SELECT count(*) AS n, min(modification) AS oldest
          FROM pg_ls_archive_statusdir() WHERE name ~ '^[0-9A-F]{24}\.ready$') r
SQL
}

# backup_cipher REPO PASSFILE: how a pgBackRest repository is encrypted,
# for `platform render pgbackrest cipher=...`: "file" (aes-256-cbc), its
# passphrase generated once into PASSFILE (mode 600, kept apart from the
# repository: a copy of the repository alone reveals nothing), or "none"
# for a repository made unencrypted before, which stays so (pgBackRest
# cannot encrypt one in place; its backup.info is then plain text): it is
# said on stderr.
backup_cipher() {
  local repo="$1" pass="$2" info
  for info in "$repo"/backup/*/backup.info; do
    if [ -f "$info" ] && head -c 10 "$info" | grep -q '^\[backrest'; then
      log "pgbackrest: WARNING: $repo was made unencrypted and stays so; move it away and back up again for an encrypted one" >&2
      echo none
      return 0
    fi
  done
  if [ ! -s "$pass" ]; then
    (umask 077; mkdir -p "$(dirname "$pass")"; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$pass")
  fi
  echo file
}
