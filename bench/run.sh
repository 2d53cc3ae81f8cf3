#!/usr/bin/env bash
# Benchmarks of snowflake_pg against the usual ways to make keys, on a fresh cluster per
# PostgreSQL version, one section a script (docs/performance.md gives the method):
#   calls.sh   call cost of snowflake_next() and its peers in one backend
#   insert.sh  pgbench inserting into tables keyed by each default; primary-key index sizes
#   scale.sh   ids per second with 1 and 2 clients
#   bursts.sh  one statement minting BURST ids, at the default lead bound and a lower one
#   layouts.sh call cost of snowflake_next() on other layouts, and with a gene
# Every comparison runs in alternating rounds and reports medians; the verdicts read the
# targets in bench/targets.txt. Prints the report and writes it to bench/results/pgV.txt.
# Usage: bash bench/run.sh [15|18 ...]   (both by default; the extension installed)
# Sizes and SECTIONS come from the environment: see bench/common.sh. A quick check:
#   CALLS=200000 ROUNDS=2 PGBENCH_ROUNDS=2 DURATION=3 ROWS=100000 BURST=300000 bash bench/run.sh 15
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The same settings for every candidate: no disk in the insert path, no checkpoint,
# autovacuum, JIT compile or parallel plan in one candidate's timing and not another's.
settings=(shared_buffers=256MB fsync=off full_page_writes=off synchronous_commit=off
  max_wal_size=4GB checkpoint_timeout=1h autovacuum=off jit=off max_parallel_workers_per_gather=0)
versions=("$@")
((${#versions[@]})) || versions=(15 18)
for section in $SECTIONS; do
  [[ -f $BENCH_DIR/$section.sh ]] || { echo "unknown section $section" >&2; exit 2; }
done

for version in "${versions[@]}"; do
  name=bench$version results=$BENCH_DIR/results/pg$version.txt started=$SECONDS
  note "$name" "starting a cluster on port $((5700 + version))"
  cluster_start "$name" "$version" $((5700 + version)) "${settings[@]}"
  trap 'cluster_stop "$name"; rm -f "$results.tmp"' EXIT
  cluster_psql "$name" -q -f "$BENCH_DIR/setup.sql" >/dev/null
  grep -v -e '^#' -e '^[[:space:]]*$' "$BENCH_DIR/targets.txt" | sql "$name" "COPY targets FROM STDIN (DELIMITER '|')"
  {
    echo "snowflake_pg benchmarks on PostgreSQL $version"
    echo "date:        $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "kernel:      $(uname -r)"
    echo "cpu:         $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), nproc $(nproc)"
    echo "load avg:    $(cut -d' ' -f1-3 /proc/loadavg) (at start)"
    echo "postgresql:  $(sql "$name" "SELECT version()")"
    echo "extension:   snowflake_pg $(sql "$name" "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'")"
    echo "parameters:  ROUNDS=$ROUNDS CALLS=$CALLS PGBENCH_ROUNDS=$PGBENCH_ROUNDS DURATION=$DURATION" \
      "CLIENTS=\"$CLIENTS\" ROWS=$ROWS BURST=$BURST BURST_ROUNDS=$BURST_ROUNDS LOW_LEAD=$LOW_LEAD" \
      "SECTIONS=\"$SECTIONS\""
    echo "settings:    ${settings[*]}"
    for section in $SECTIONS; do bash "$BENCH_DIR/$section.sh" "$name"; done
    echo
    echo "run time: $((SECONDS - started)) s"
  } | tee "$results.tmp"
  mv "$results.tmp" "$results"
  cluster_stop "$name"
  note "$name" "written to ${results#"$SNOWFLAKE_PG_ROOT"/}"
done
