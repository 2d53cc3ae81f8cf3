#!/usr/bin/env bash
# Benchmarks of snowflake_pg against the usual ways to make keys, on a fresh cluster per
# PostgreSQL version, one section a script (docs/performance.md gives the method):
#   calls.sh   call cost of snowflake_next() and its peers in one backend
#   insert.sh  pgbench inserting into tables keyed by each default, 1 and 10 rows a transaction
#   index.sh   the primary-key index sizes of those tables, in bulk and concurrently
#   scale.sh   ids per second with 1 and 2 clients
#   bursts.sh  one statement minting BURST ids, at the default lead bound and a lower one
#   layouts.sh call cost of snowflake_next() on other layouts, and with a gene
#   keys.sh    10M rows into each key default: load time, key, table and index sizes
#              (only when named: SECTIONS=keys)
#   density.sh each key default's primary-key index, size and leaf density, after 1 to 8
#              concurrent writers, and the time order of 8 writers' ids (only when named:
#              SECTIONS=density)
# Every comparison runs in alternating rounds and reports medians; the verdicts read the
# targets in bench/targets.txt. Prints the report and writes it to bench/results/: pgV.txt
# for the default sections, SECTIONS-pgV.txt for others (keys-pg18.txt), with -durable
# before .txt when DURABLE=1 (durable commits; the insert section by default).
# Usage: bash bench/run.sh [15|18 ...]   (both by default; the extension installed)
# Sizes, SECTIONS and DURABLE come from the environment: see bench/common.sh. A quick check:
#   CALLS=200000 ROUNDS=2 PGBENCH_ROUNDS=2 DURATION=3 ROWS=100000 BURST=300000 bash bench/run.sh 15
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

versions=("$@")
((${#versions[@]})) || versions=(15 18)
for section in $SECTIONS; do
  [[ -f $BENCH_DIR/$section.sh ]] || { echo "unknown section $section" >&2; exit 2; }
done
command="bash bench/run.sh" report=pg suffix=
if ((DURABLE)); then command="DURABLE=1 $command" suffix=-durable; fi
if [[ $SECTIONS != "$DEFAULT_SECTIONS" ]]; then
  command="SECTIONS=\"$SECTIONS\" $command" report="${SECTIONS// /-}-pg"
fi
if ((DURABLE)); then
  commits="durable: fsync, full_page_writes and synchronous_commit on (DURABLE=1)"
else
  commits="not durable: fsync, full_page_writes and synchronous_commit off (DURABLE=1 turns them on)"
fi

for version in "${versions[@]}"; do
  installed=$(library "$version")
  if [[ $installed == *DEBUG* ]]; then
    echo "PostgreSQL $version has a debug build of snowflake_pg ($installed): install a release" \
      "build first (scripts/setup.sh, or install_extension $version of scripts/lib.sh)" >&2
    exit 1
  fi
  name=bench$version results=$BENCH_DIR/results/$report$version$suffix.txt started=$SECONDS
  note "$name" "starting a cluster on port $((5700 + version))"
  cluster_start "$name" "$version" $((5700 + version)) "${BENCH_SETTINGS[@]}"
  trap 'cluster_stop "$name"; rm -f "$results.tmp"' EXIT
  cluster_psql "$name" -q -f "$BENCH_DIR/setup.sql" >/dev/null
  grep -v -e '^#' -e '^[[:space:]]*$' "$BENCH_DIR/targets.txt" | sql "$name" "COPY targets FROM STDIN (DELIMITER '|')"
  {
    echo "snowflake_pg benchmarks on PostgreSQL $version"
    echo "command:     $command $version (with the parameters below)"
    echo "date:        $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "kernel:      $(uname -r)"
    echo "cpu:         $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), nproc $(nproc)"
    echo "load avg:    $(cut -d' ' -f1-3 /proc/loadavg) (at start; the machine may run other work)"
    echo "postgresql:  $(sql "$name" "SELECT version()")"
    echo "extension:   snowflake_pg $(sql "$name" "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'")"
    echo "library:     $installed"
    echo "parameters:  ROUNDS=$ROUNDS CALLS=$CALLS PGBENCH_ROUNDS=$PGBENCH_ROUNDS DURATION=$DURATION" \
      "CLIENTS=\"$CLIENTS\" ROWS_PER_TX=\"$ROWS_PER_TX\" ROWS=$ROWS BURST=$BURST" \
      "BURST_ROUNDS=$BURST_ROUNDS LOW_LEAD=$LOW_LEAD KEY_ROWS=$KEY_ROWS KEY_ROUNDS=$KEY_ROUNDS" \
      "DENSITY_ROWS=$DENSITY_ROWS DENSITY_BATCH_ROWS=$DENSITY_BATCH_ROWS" \
      "DENSITY_ORDER_ROWS=$DENSITY_ORDER_ROWS DENSITY_WRITERS=\"$DENSITY_WRITERS\"" \
      "DURABLE=$DURABLE SECTIONS=\"$SECTIONS\""
    echo "commits:     $commits"
    echo "settings:    ${BENCH_SETTINGS[*]}"
    for section in $SECTIONS; do bash "$BENCH_DIR/$section.sh" "$name"; done
    echo
    if [[ $(library "$version") != "$installed" ]]; then
      echo "library:     REPLACED during the run: $(library "$version"); the figures are not one build's"
    fi
    echo "load avg:    $(cut -d' ' -f1-3 /proc/loadavg) (at the end)"
    echo "run time:    $((SECONDS - started)) s"
  } | tee "$results.tmp"
  mv "$results.tmp" "$results"
  cluster_stop "$name"
  note "$name" "written to ${results#"$SNOWFLAKE_PG_ROOT"/}"
done
