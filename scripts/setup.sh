#!/usr/bin/env bash
# Installs what the demo needs on Debian 12, as root, skipping what is already there:
# PostgreSQL 15 with its server headers (Debian), libclang and clang (pgrx generates its
# bindings with them, and clang links), pkg-config and libssl-dev (cargo-pgrx's build
# links OpenSSL) and cargo-pgrx 0.19.3, told of PostgreSQL 15. Rust itself (rustc and
# cargo 1.96 or later, which pgrx 0.19.3 needs) must be there: the default toolchain, or
# another that rustup has (scripts/lib.sh picks it). The tests need more: scripts/setup-tests.sh runs this
# script, then installs the rest. Safe to run again, and quick then. It starts no server,
# and stops none but the one Debian's postgresql-15 starts when this run installs it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"

say() { printf '== setup: %s\n' "$*"; }

command -v cargo >/dev/null || { echo "setup: no cargo: install Rust $RUST_MIN_VERSION or later first (rustup.rs)" >&2; exit 1; }
rust_toolchain_select
[[ -n $PGRX_VERSION ]] || { echo "setup: Cargo.toml pins no pgrx version" >&2; exit 1; }
fresh=$(apt_install_missing postgresql-15 postgresql-server-dev-15 libclang-dev clang pkg-config libssl-dev)
# Installing postgresql-15 creates and may start Debian's own cluster 15/main (port 5432).
# The demo and the tests start their own servers on their own ports and directories, so
# that one cluster, started by this run's apt-get, is stopped; any server this run did not
# start is left alone.
if grep -qx postgresql-15 <<<"$fresh" && pg_lsclusters -h 15 main 2>/dev/null | grep -q online; then
  say "stopping the cluster 15/main that installing postgresql-15 started"
  pg_ctlcluster 15 main stop || true
fi

if [[ "$(cargo pgrx --version 2>/dev/null)" != "cargo-pgrx $PGRX_VERSION" ]]; then
  say "cargo install cargo-pgrx $PGRX_VERSION with $(rustc --version) (about 6 minutes on 2 cores)"
  cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
fi

# cargo-pgrx told of PostgreSQL 15, unless it knows it (scripts/setup-tests.sh tells it of
# every major; this leaves that be).
config=${PGRX_HOME:-$HOME/.pgrx}/config.toml
if ! grep -qxF "pg15 = \"$(pg_config_of 15)\"" "$config" 2>/dev/null; then
  say "cargo pgrx init --pg15 $(pg_config_of 15)"
  cargo pgrx init --pg15 "$(pg_config_of 15)"
fi
say "ready: $("$(pg_config_of 15)" --version), $(cargo pgrx --version)"
