#!/usr/bin/env bash
# Parallel query: snowflake_next() is volatile and parallel safe, so a parallel plan
# calls it once per row, in the leader and in every worker, each a process with its
# own backend slot and generator. Forced here with zero parallel costs.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=parallel$version port=$((port_base + 3)) rows=500000 runs=4

start "$name" "$port" max_worker_processes=16 max_parallel_workers=16
sql "$name" "CREATE EXTENSION snowflake_pg;
  CREATE TABLE source AS SELECT g FROM generate_series(1, $rows) g; ANALYZE source;
  CREATE TABLE minted (id bigint PRIMARY KEY, g int, run int)"
parallel="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
  SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;"
select="SELECT snowflake_next() AS id, g FROM source"

plan=$(sql "$name" "$parallel EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $select")
workers=$(sed -n 's/.*Workers Launched: \([0-9]*\).*/\1/p' <<<"$plan")
((${workers:-0} >= 2)) || { echo "$plan"; fail "the plan launched ${workers:-no} workers"; }

# Parallel plans in several sessions at once (enough worker processes for all of
# them), all into one primary key.
for run in $(seq "$runs"); do
  sql "$name" "$parallel CREATE TABLE batch$run AS $select;
    INSERT INTO minted SELECT id, g, $run FROM batch$run" &
done
wait_all() { local status=0 pid; for pid in $(jobs -p); do wait "$pid" || status=1; done; return $status; }
wait_all || fail "a parallel session failed"

minted=$(check_distinct "$name" minted)
((minted == runs * rows)) || fail "$minted rows, expected $((runs * rows))"
# Volatile: one id per row, never one id for the whole query.
per_run=$(sql "$name" "SELECT min(c) FROM (SELECT count(DISTINCT id) c FROM minted GROUP BY run) s")
((per_run == rows)) || fail "a run minted $per_run distinct ids for $rows rows"
slots=$(sql "$name" "SELECT min(s) FROM (SELECT count(DISTINCT (snowflake_parse(id)).backend_slot) s
  FROM minted GROUP BY run) t")
((slots >= 2)) || fail "a run's ids came from $slots process, not from its workers"
# Stable and parallel safe: the floor of a range scan runs in the workers' plan too.
in_range=$(sql "$name" "$parallel SET enable_indexscan = off; SET enable_bitmapscan = off;
  SELECT count(*) FROM minted WHERE id >= snowflake_floor(now() - interval '1 hour')
  AND id < snowflake_floor(now() + interval '1 hour')")
((in_range == minted)) || fail "a parallel range scan found $in_range of $minted ids"
check_log "$name"
figure "$runs concurrent sessions, each a parallel plan over $rows rows ($workers workers" \
  "launched per plan), $minted ids from at least $slots processes per plan, 0 duplicates"
