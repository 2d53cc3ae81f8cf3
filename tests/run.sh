#!/usr/bin/env bash
# Sets up the machine, then runs every test of snowflake_pg against PostgreSQL 15 and 18:
# lint, unit and property tests with #[pg_test]s (cargo pgrx test), the pg_regress suite,
# the concurrency test and the reliability suite.
# Usage: bash tests/run.sh [15|18 ...]   (both versions by default)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
bash scripts/setup.sh || exit 1
source scripts/lib.sh

versions=("$@")
((${#versions[@]})) || versions=(15 18)
passed=0 failed=0 failures=()

step() { # step NAME COMMAND...
  local name=$1; shift
  echo "== $name"
  local start=$SECONDS
  if "$@"; then
    passed=$((passed + 1)); echo "-- ok: $name ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1)); failures+=("$name"); echo "-- FAILED: $name ($((SECONDS - start)) s)"
  fi
}

lint() {
  cargo fmt --check &&
    cargo clippy --quiet --no-default-features --features "pg15 pg_test" --all-targets -- -D warnings
}

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

regress() { # what psql users see, against a fresh cluster
  local version=$1 name=regress$1 port=$((5440 + $1)) out=$root/target/regress-pg$1 status=0
  local pg_regress
  pg_regress=$(dirname "$("$(pg_config_of "$version")" --pgxs)")/../test/regress/pg_regress
  cluster_start "$name" "$version" "$port" || return 1
  rm -rf "$out" && mkdir -p "$out"
  "$pg_regress" --bindir="$(pg_bin_of "$version")" --host="$CLUSTERS_DIR/$name" --port="$port" \
    --user=postgres --inputdir="$root/tests/regress" --outputdir="$out" \
    --dbname=snowflake_regress functions errors range_scan || status=1
  [[ $status == 0 ]] || cat "$out/regression.diffs" 2>/dev/null
  cluster_stop "$name" "$version"
  return $status
}

step "lint (cargo fmt, cargo clippy)" lint
for v in "${versions[@]}"; do
  step "pg$v: unit, property and pg tests" cargo_tests "$v"
  step "pg$v: build and install" install_extension "$v"
  step "pg$v: pg_regress suite" regress "$v"
  step "pg$v: concurrency (pgbench)" bash tests/concurrency.sh "$v"
  step "pg$v: concurrency (pgbench), library preloaded" bash tests/concurrency.sh "$v" preload
  if [[ -f tests/reliability/run.sh ]]; then
    step "pg$v: reliability suite" bash tests/reliability/run.sh "$v"
  fi
done

((failed == 0)) || printf 'failed: %s\n' "${failures[@]}"
echo "$passed passed, $failed failed"
((failed == 0))
