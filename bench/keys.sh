#!/usr/bin/env bash
# 6. Keys: why not uuidv7(), bigserial or gen_random_uuid(). Each key default of the insert
# path (bench/setup.sql), and pgEdge's snowflake.nextval() where the server has that
# extension (the snowflake extension; not built by this project), loads KEY_ROWS rows by
# one INSERT ... SELECT into its emptied table with its primary key, after a checkpoint,
# timed in the server by statement_times() (bench/bench_ms.sql: the elapsed time and the
# backend's CPU time), in KEY_ROUNDS alternating rounds; after each load, the size of a
# key, of the table and of its primary-key index. Then the index once more after KEY_ROWS
# rows inserted concurrently, as bench/index.sh does with ROWS. Takes some 12 minutes on 18
# with the defaults, on 2 cores: not in the default SECTIONS.
# Usage: bash bench/keys.sh CLUSTER   (run by bench/run.sh: SECTIONS=keys bash bench/run.sh 18)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=$1
mapfile -t tables < <(key_tables "$name")
if [[ $(sql "$name" "SELECT count(*) FROM pg_available_extensions WHERE name = 'snowflake'") == 1 ]]; then
  sql "$name" "CREATE EXTENSION snowflake" -c "ALTER DATABASE postgres SET snowflake.node = 1" \
    -c "CREATE TABLE t_pgedge (id bigint PRIMARY KEY DEFAULT snowflake.nextval(), payload int NOT NULL)"
  tables+=(pgedge)
fi

for ((r = 1; r <= KEY_ROUNDS; r++)); do
  note "$name" "keys: round $r of $KEY_ROUNDS"
  for t in $(rotate "$r" "${tables[@]}"); do
    sql "$name" "TRUNCATE t_$t" -c CHECKPOINT
    read -r elapsed cpu < <(sql "$name" "SELECT * FROM statement_times(
      'INSERT INTO t_$t (payload) SELECT 1 FROM generate_series(1, $KEY_ROWS)')" -F ' ')
    sample "$name" keys "$t" 1 "$r" "$elapsed"
    sample "$name" key_cpu "$t" 1 "$r" "$cpu"
    read -r key heap < <(sql "$name" "SELECT pg_column_size(id), pg_relation_size('t_$t') FROM t_$t LIMIT 1" -F ' ')
    sample "$name" key_bytes "$t" 1 "$r" "$key"
    sample "$name" key_table "$t" 1 "$r" "$heap"
    sample "$name" key_index "$t" 1 "$r" "$(index_size "$name" "$t")"
  done
done
note "$name" "keys: concurrent index sizes"
for t in "${tables[@]}"; do
  sample "$name" key_concurrent "$t" "${CLIENTS%% *}" 1 \
    "$(concurrent_index "$name" "$t" "$KEY_ROWS" "${CLIENTS%% *}" "${ROWS_PER_TX##* }")"
  sql "$name" "TRUNCATE t_$t"
done
report "$name" keys
