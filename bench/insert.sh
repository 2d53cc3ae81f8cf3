#!/usr/bin/env bash
# 2. Insert path: pgbench inserting ROWS_PER_TX rows per transaction into one table per key
# default (bench/setup.sql), each run on an emptied table after a checkpoint, in
# PGBENCH_ROUNDS alternating rounds for each client count of CLIENTS. Then the size of
# each primary-key index after ROWS rows: in bulk, one INSERT ... SELECT in one backend;
# and concurrently, the pgbench transactions above with the first client count.
# Usage: bash bench/insert.sh CLUSTER   (run by bench/run.sh)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=$1 dir=$(cluster_dir "$1")
tables=(snowflake bigserial uuid)
if has_uuidv7 "$name"; then tables+=(uuidv7); fi
for t in "${tables[@]}"; do
  echo "INSERT INTO t_$t (payload) SELECT 1 FROM generate_series(1, $ROWS_PER_TX);" >"$dir/insert_$t.sql"
done

for c in $CLIENTS; do
  for ((r = 1; r <= PGBENCH_ROUNDS; r++)); do
    note "$name" "insert path, $c clients: round $r of $PGBENCH_ROUNDS"
    for t in $(rotate "$r" "${tables[@]}"); do
      sql "$name" "TRUNCATE t_$t" -c CHECKPOINT
      tps=$(tps "$name" "$c" -f "$dir/insert_$t.sql" -T "$DURATION")
      sample "$name" insert "$t" "$c" "$r" "$tps"
    done
  done
done

first=${CLIENTS%% *}
note "$name" "index sizes"
for t in "${tables[@]}"; do
  sql "$name" "TRUNCATE t_$t" -c "INSERT INTO t_$t (payload) SELECT 1 FROM generate_series(1, $ROWS)"
  sample "$name" bulk "$t" 1 1 "$(sql "$name" "SELECT pg_relation_size('t_${t}_pkey')")"
  sql "$name" "TRUNCATE t_$t"
  tps "$name" "$first" -f "$dir/insert_$t.sql" -t $((ROWS / (first * ROWS_PER_TX))) >/dev/null
  sample "$name" concurrent "$t" "$first" 1 "$(sql "$name" "SELECT pg_relation_size('t_${t}_pkey')")"
done
report "$name" insert
