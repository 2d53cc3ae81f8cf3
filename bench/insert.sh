#!/usr/bin/env bash
# 2. Insert path: pgbench inserting into one table per key default (bench/setup.sql), for
# each count of rows per transaction of ROWS_PER_TX (one row by INSERT ... VALUES, more by
# one INSERT ... SELECT) and each client count of CLIENTS, in PGBENCH_ROUNDS alternating
# rounds, each run on an emptied table after a checkpoint.
# Usage: bash bench/insert.sh CLUSTER   (run by bench/run.sh)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=$1
mapfile -t tables < <(key_tables "$name")
for n in $ROWS_PER_TX; do
  for c in $CLIENTS; do
    for ((r = 1; r <= PGBENCH_ROUNDS; r++)); do
      note "$name" "insert path, $n rows a transaction, $c clients: round $r of $PGBENCH_ROUNDS"
      for t in $(rotate "$r" "${tables[@]}"); do
        sql "$name" "TRUNCATE t_$t" -c CHECKPOINT
        tps=$(tps "$name" "$c" -f "$(insert_script "$name" "$t" "$n")" -T "$DURATION")
        sample "$name" "insert/$n" "$t" "$c" "$r" "$tps"
      done
    done
  done
done
report "$name" insert
