#!/usr/bin/env bash
# Sets up the machine, then runs every test of snowflake_pg against PostgreSQL 15 and 18:
# lint, unit and property tests with #[pg_test]s (cargo pgrx test), the pg_regress suite,
# the security suite, the concurrency test and the reliability suite; then no server log
# of the run may show an internal error (XX000). Each piece also runs alone against an
# installed build (see the README, "Tests").
# Usage: bash tests/run.sh [15|18 ...]   (both versions by default)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
bash scripts/setup.sh || exit 1
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

versions=("$@")
((${#versions[@]})) || versions=(15 18)
# A gene layout with few sequence bits (256 ids per ms per backend), on which the
# scenarios that mint the most run again: bursts borrow ticks and meet the lead bound.
gene_layout='time:41, node:2, slot:8, sequence:8, gene:4'
gene_scenarios=(01-churn 02-pooler 03-parallel 04-terminate 07-burst)

shell_lint() { # every shell script, the sourced files followed
  local scripts
  mapfile -t scripts < <(git ls-files --cached --others --exclude-standard -- '*.sh' .ci/run)
  shellcheck -x "${scripts[@]}"
}

clippy() { cargo clippy --quiet --no-default-features --features "pg$1 pg_test" --all-targets -- -D warnings; }

cargo_tests() { # unit, property and #[pg_test] tests; initdb needs a non-root owner
  local pgdata=$CLUSTERS_DIR/pgrx-test-$1
  mkdir -p "$CLUSTERS_DIR" && rm -rf "$pgdata"
  if [[ $(id -u) == 0 ]]; then
    chown postgres: "$CLUSTERS_DIR"
    cargo pgrx test "pg$1" --runas postgres --pgdata "$pgdata"
  else
    cargo pgrx test "pg$1"
  fi
}

internal_errors_forget
run_step "lint: cargo fmt" cargo fmt --check
run_step "lint: shellcheck" shell_lint
for v in "${versions[@]}"; do
  run_step "pg$v: lint: cargo clippy" clippy "$v"
  run_step "pg$v: unit, property and pg tests" cargo_tests "$v"
  run_step "pg$v: build and install" install_extension "$v"
  run_step "pg$v: pg_regress suite" bash tests/regress.sh "$v"
  run_step "pg$v: Debian package (apt-get install, pg_regress against it)" bash tests/package.sh "$v"
  run_step "pg$v: security (a hostile role against every function)" bash tests/security.sh "$v"
  run_step "pg$v: security, library preloaded" bash tests/security.sh "$v" preload
  run_step "pg$v: concurrency (pgbench)" bash tests/concurrency.sh "$v"
  run_step "pg$v: concurrency (pgbench), library preloaded" bash tests/concurrency.sh "$v" preload
  run_step "pg$v: concurrency (pgbench), gene layout" bash tests/concurrency.sh "$v" gene
  run_step "pg$v: reliability suite" bash tests/reliability/run.sh "$v"
  run_step "pg$v: reliability suite, gene layout" env RELIABILITY_LAYOUT="$gene_layout" BURST_IDS=500000 \
    bash tests/reliability/run.sh "$v" "${gene_scenarios[@]}"
done
run_step "no internal error (XX000) in any server log" internal_errors_none
steps_report "tests, PostgreSQL ${versions[*]}"
