#!/usr/bin/env bash
# Installs what the demo needs on Debian 12, as root, skipping what is already there:
# Debian's packages of DEMO_PACKAGES (scripts/lib.sh: PostgreSQL 15 with its server
# headers, what pgrx and cargo-pgrx build with) and cargo-pgrx 0.19.3, told of PostgreSQL
# 15. Rust itself (rustc and cargo 1.96 or later, which pgrx 0.19.3 needs) must be there:
# the default toolchain, or another that rustup has (scripts/lib.sh picks it). The tests
# need more: scripts/setup-tests.sh installs these packages with its own, then runs this
# script beside the rest of its setup. Safe to run again, and quick then. It starts no
# server, and stops none but the one Debian's postgresql-15 starts when this run installs it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"

say() { printf '== setup: %s\n' "$*"; }

command -v cargo >/dev/null || { echo "setup: no cargo: install Rust $RUST_MIN_VERSION or later first (rustup.rs)" >&2; exit 1; }
rust_toolchain_select
[[ -n $PGRX_VERSION ]] || { echo "setup: Cargo.toml pins no pgrx version" >&2; exit 1; }
install_packages "${DEMO_PACKAGES[@]}"

# Compiled unoptimised (cargo's dev profile), without debug info: cargo-pgrx drives cargo
# and pg_config and reads the built library's schema, work of milliseconds, so optimising
# it only costs minutes of CPU on a new machine.
if [[ "$(cargo pgrx --version 2>/dev/null)" != "cargo-pgrx $PGRX_VERSION" ]]; then
  say "cargo install --debug cargo-pgrx $PGRX_VERSION with $(rustc --version)"
  compile_began=$SECONDS
  CARGO_PROFILE_DEV_DEBUG=false cargo install --debug cargo-pgrx --version "$PGRX_VERSION" --locked
  say "cargo-pgrx compiled in $((SECONDS - compile_began)) s"
fi

# cargo-pgrx told of PostgreSQL 15, unless it knows it (scripts/setup-tests.sh tells it of
# every major; this leaves that be).
config=${PGRX_HOME:-$HOME/.pgrx}/config.toml
if ! grep -qxF "pg15 = \"$(pg_config_of 15)\"" "$config" 2>/dev/null; then
  say "cargo pgrx init --pg15 $(pg_config_of 15)"
  cargo pgrx init --pg15 "$(pg_config_of 15)"
fi
say "ready: $("$(pg_config_of 15)" --version), $(cargo pgrx --version)"
