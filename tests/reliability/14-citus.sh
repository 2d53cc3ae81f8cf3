#!/usr/bin/env bash
# Citus: a coordinator and two workers on this machine, every node minting with its Citus
# group id as node id (snowflake.node_source = citus) and claiming it in snowflake_nodes,
# made a reference table by the one documented call. Tables distributed by a tenant column
# and by the id itself take inserts through every node at once; a shard moves between the
# workers while inserts run; time ranges by snowflake_floor span the shards. A worker that
# joins later with the coordinator's node id is refused at its first mint; a claim rolled
# back is claimed again; a server not yet in the cluster (group 0, like the coordinator)
# is refused, and its session settles again once the server has joined.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
release=$(citus_version_of "$version")
if [[ -z $release ]]; then
  echo "SKIP: no Citus release supports PostgreSQL $version yet (the release each major gets: citus_version_of, scripts/lib.sh)"
  exit 0
fi
if [[ ! -f $(citus_lib) ]]; then
  echo "SKIP: Citus is not installed in PostgreSQL $version ($(citus_lib)); scripts/setup-tests.sh builds" \
    "Citus $release into it when ../shared/citus is beside the clone"
  log=$(citus_failed_log "$version")
  if [[ -f $log ]]; then
    why=$(sed -n '/^Built, but/,$p' "$log")
    echo "  it could not here ($log): $(echo "${why:-$(tail -n 3 "$log")}" | tr -s '\n' ' ')"
  fi
  exit 0
fi
port=$((port_base + 23)) clients=3 transactions=60
coordinator=citus$version-coordinator workers=("citus$version-worker1" "citus$version-worker2")
nodes=("$coordinator" "${workers[@]}")
wait_all() { local status=0 pid; for pid in $(jobs -p); do wait "$pid" || status=1; done; return $status; }

citus_cluster "citus$version" "$port" "${#workers[@]}" snowflake.node_source=citus
citus=$(sql "$coordinator" "SELECT citus_version()")
[[ $citus == "Citus $release "* ]] || fail "the cluster runs $citus, not Citus $release"
figure "${citus%%,*}, PostgreSQL $(sql "$coordinator" "SHOW server_version")"
# Created on the coordinator, the extension reaches every worker; then the claims table
# is made a reference table, with a placement on every node.
sql "$coordinator" "CREATE EXTENSION snowflake_pg" \
  -c "SELECT create_reference_table('snowflake_nodes')" \
  -c "CREATE TABLE by_tenant (id bigint NOT NULL DEFAULT snowflake_next(), tenant int NOT NULL,
        via int NOT NULL, PRIMARY KEY (tenant, id))" \
  -c "SELECT create_distributed_table('by_tenant', 'tenant')" \
  -c "CREATE TABLE by_id (id bigint PRIMARY KEY DEFAULT snowflake_next(), tenant int NOT NULL,
        via int NOT NULL)" \
  -c "SELECT create_distributed_table('by_id', 'id')" >/dev/null
for node in "${workers[@]}"; do
  [[ $(sql "$node" "SELECT count(*) FROM pg_extension WHERE extname = 'snowflake_pg'") == 1 ]] ||
    fail "CREATE EXTENSION on the coordinator did not reach $node"
done

# A transaction: 5 rows into the tenant table in one multi-row VALUES, one of them for
# tenant :moved (whose shard moves below), and 4 into the id table by INSERT .. SELECT.
# Every row says which node it went through: the node's port, in via.
declare -A rows_per_transaction=([by_tenant]=5 [by_id]=4)
rows_per_transaction_in_all=$((rows_per_transaction[by_tenant] + rows_per_transaction[by_id]))
script=$CLUSTERS_DIR/$coordinator/insert.sql
cat >"$script" <<'SQL'
\set tenant random(1, 1000000)
INSERT INTO by_tenant (tenant, via) VALUES (:tenant, :via), (:tenant + 1, :via),
  (:tenant + 2, :via), (:tenant + 3, :via), (:moved, :via);
INSERT INTO by_id (tenant, via) SELECT :tenant, :via FROM generate_series(1, 4);
SQL
moved_tenant=1
# insert NODE [pgbench args...]: the script through NODE; prints pgbench_run's figures.
insert() {
  local node=$1; shift
  pgbench_run "$node" -f "$script" -D via="$(cluster_port "$node")" -D moved=$moved_tenant "$@"
}
# add_committed FILE...: counts the transactions of pgbench_run's figures in the files,
# none of them failed.
committed=0
add_committed() {
  local file tps processed failed
  for file in "$@"; do
    while read -r tps processed failed; do
      ((failed == 0)) || fail "$failed transactions failed ($file: $tps $processed $failed)"
      committed=$((committed + processed))
    done <"$file"
  done
}
# expect_rows: both tables hold every row of the transactions committed so far, once,
# and the tenant table the $held_rows rows of the transaction held across the move.
held_rows=0
expect_rows() {
  local table rows expected
  for table in by_tenant by_id; do
    rows=$(check_distinct "$coordinator" "$table")
    expected=$((committed * rows_per_transaction[$table]))
    [[ $table == by_tenant ]] && expected=$((expected + held_rows))
    ((rows == expected)) || fail "$table holds $rows rows, expected $expected"
  done
}

# 1. Inserts through the coordinator and each worker at once.
for node in "${nodes[@]}"; do
  insert "$node" -c "$clients" -j "$clients" -t "$transactions" >"$CLUSTERS_DIR/$node/concurrent.out" &
done
wait_all || fail "inserts through a node failed"
for node in "${nodes[@]}"; do
  add_committed "$CLUSTERS_DIR/$node/concurrent.out"
done
((committed == ${#nodes[@]} * clients * transactions)) ||
  fail "$committed transactions of $((${#nodes[@]} * clients * transactions))"
expect_rows
figure "coordinator and ${#workers[@]} workers, $clients clients each, $transactions transactions per" \
  "client: $((committed * rows_per_transaction_in_all)) rows into a table distributed by tenant and one by id," \
  "0 duplicates, every row there"

# 2. Each node mints with its group id as node id, and holds the claim of it.
for node in "${nodes[@]}"; do
  group=$(sql "$node" "SELECT groupid FROM pg_dist_local_group")
  for table in by_tenant by_id; do
    minted=$(sql "$coordinator" "SELECT string_agg(DISTINCT (snowflake_parse(id)).node_id::text, ',')
      FROM $table WHERE via = $(cluster_port "$node")")
    [[ $minted == "$group" ]] || fail "rows of $table through $node (group $group) have node ids $minted"
  done
  claim=$(sql "$node" "SELECT n.system_identifier = s.system_identifier
    FROM snowflake_nodes n, pg_control_system() s WHERE n.node_id = $group")
  [[ $claim == t ]] || fail "snowflake_nodes, as $node reads it, does not give node $group to $node"
done
claims=$(sql "$coordinator" "SELECT count(*) FROM snowflake_nodes")
((claims == ${#nodes[@]})) || fail "$claims claims in snowflake_nodes for ${#nodes[@]} nodes"
figure "node id = group id on every node (0 to ${#workers[@]}, node_source = citus); one claim" \
  "per node in the reference table snowflake_nodes, read alike from every node"

# 3. The shard of tenant $moved_tenant moves to the other worker while every node inserts,
# in batches until told to stop. A transaction that inserted into the shard before the
# move began commits while it runs: the move waits for it to make its replication slot.
shard=$(sql "$coordinator" "SELECT get_shard_id_for_distribution_column('by_tenant', $moved_tenant)")
placement() { sql "$coordinator" "SELECT string_agg(nodeport::text, ',') FROM citus_shards WHERE shardid = $shard"; }
source_port=$(placement)
target_port=$(cluster_port "${workers[0]}")
[[ $source_port == "$target_port" ]] && target_port=$(cluster_port "${workers[1]}")
source_worker=${workers[0]}
[[ $(cluster_port "$source_worker") == "$source_port" ]] || source_worker=${workers[1]}
stop=$CLUSTERS_DIR/$coordinator/stop-inserts
rm -f "$stop"
insert_until_stopped() { # NODE: batches through NODE, each batch's figures in loop.out
  local out=$CLUSTERS_DIR/$1/loop.out
  : >"$out"
  until [[ -f $stop ]]; do insert "$1" -c 2 -j 2 -t 10 >>"$out" || return 1; done
}
batches() { wc -l <"$CLUSTERS_DIR/$1/loop.out"; }
loops=()
for node in "${nodes[@]}"; do
  insert_until_stopped "$node" &
  loops+=($!)
done
# alive TEXT PID...: every process PID still runs; else the step failed, as TEXT says.
alive() {
  local text=$1 pid; shift
  for pid in "$@"; do kill -0 "$pid" 2>/dev/null || fail "$text"; done
}
# batches_past NODE N: more than N batches went through NODE (the insert loops all alive).
batches_past() { alive "inserts through a node failed" "${loops[@]}" && (($(batches "$1") > $2)); }
ended() { ! kill -0 "$1" 2>/dev/null; } # PID: the process has ended

held_in=$CLUSTERS_DIR/$coordinator/held.fifo held_out=$CLUSTERS_DIR/$coordinator/held.out
rm -f "$held_in" && mkfifo "$held_in"
PGAPPNAME=held cluster_psql "$coordinator" -qAt <"$held_in" >"$held_out" 2>&1 &
held_psql=$!
exec {held}>"$held_in"
echo "BEGIN; INSERT INTO by_tenant (tenant, via) SELECT $moved_tenant, 0 FROM generate_series(1, 3);" >&"$held"
held_open() {
  alive "the held transaction failed: $(cat "$held_out")" "$held_psql" &&
    [[ $(sql "$coordinator" "SELECT count(*) FROM pg_stat_activity
      WHERE application_name = 'held' AND state = 'idle in transaction'") == 1 ]]
}
eventually "the held transaction did not begin" held_open
for node in "${nodes[@]}"; do eventually "no inserts went through $node" batches_past "$node" 0; done

move_out=$CLUSTERS_DIR/$coordinator/move.out
sql "$coordinator" "SELECT clock_timestamp()" \
  -c "SELECT citus_move_shard_placement($shard, '127.0.0.1', $source_port, '127.0.0.1', $target_port, 'force_logical')" \
  -c "SELECT clock_timestamp()" >"$move_out" 2>&1 &
move=$!
move_started() {
  alive "the shard move ended before it made its slot: $(cat "$move_out")" "$move" &&
    [[ $(sql "$source_worker" "SELECT count(*) FROM pg_replication_slots
      WHERE slot_name LIKE 'citus_shard_move_slot%'") != 0 ]]
}
eventually "the shard move made no replication slot" move_started
echo "INSERT INTO by_tenant (tenant, via) SELECT $moved_tenant, 0 FROM generate_series(1, 3);
  COMMIT; SELECT clock_timestamp();" >&"$held"
exec {held}>&-
eventually "the held transaction did not end" ended "$held_psql"
wait "$held_psql" || fail "the held transaction failed: $(cat "$held_out")"
eventually "the shard move did not end" ended "$move"
wait "$move" || fail "the shard move failed: $(cat "$move_out")"
held_rows=6
# After the move, one more batch through every node, then the inserts stop.
declare -A after_move
for node in "${nodes[@]}"; do after_move[$node]=$(batches "$node"); done
for node in "${nodes[@]}"; do
  eventually "no inserts went through $node after the move" batches_past "$node" "${after_move[$node]}"
done
touch "$stop"
wait_all || fail "inserts through a node failed while the shard moved"
mapfile -t move_times < <(grep -v '^$' "$move_out")
committed_at=$(tail -n 1 "$held_out")
[[ $(sql "$coordinator" "SELECT '$committed_at'::timestamptz > '${move_times[0]}'
    AND '$committed_at'::timestamptz < '${move_times[1]}'") == t ]] ||
  fail "the held transaction committed at $committed_at, not during the move (${move_times[*]}): $(cat "$held_out")"
[[ $(placement) == "$target_port" ]] || fail "shard $shard is on $(placement), not on $target_port"
for node in "${nodes[@]}"; do add_committed "$CLUSTERS_DIR/$node/loop.out"; done
expect_rows
held=$(sql "$coordinator" "SELECT count(*) FROM by_tenant WHERE via = 0")
((held == held_rows)) || fail "$held rows of the transaction held across the move, expected $held_rows"
during=$(sql "$coordinator" "SELECT count(*) FROM by_tenant WHERE tenant = $moved_tenant
  AND (snowflake_parse(id)).ts BETWEEN '${move_times[0]}' AND '${move_times[1]}'")
seconds=$(sql "$coordinator" "SELECT round(extract(epoch FROM '${move_times[1]}'::timestamptz
  - '${move_times[0]}'::timestamptz), 1)")
figure "shard $shard moved from port $source_port to $target_port (logical, $seconds s) while every node" \
  "inserted: $during rows minted into it during the move, a transaction open across its start" \
  "committed; $((committed * rows_per_transaction_in_all + held_rows)) rows in all, 0 lost, 0 duplicates"

# 4. Time ranges across the shards: the rows with id >= snowflake_floor(t1) and
# id < snowflake_floor(t2) are exactly those whose own time is in [t1, t2), for bounds
# taken from the rows (quartiles of their times), asked through the coordinator and a worker.
ranges=0
for table in by_tenant by_id; do
  IFS='|' read -r t1 t2 < <(sql "$coordinator" "SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY ts),
      percentile_disc(0.75) WITHIN GROUP (ORDER BY ts)
    FROM (SELECT (snowflake_parse(id)).ts FROM $table) s")
  for node in "$coordinator" "${workers[0]}"; do
    differ=$(sql "$node" "WITH by_floor AS (SELECT id FROM $table
        WHERE id >= snowflake_floor('$t1') AND id < snowflake_floor('$t2')),
      by_time AS (SELECT id FROM $table
        WHERE (snowflake_parse(id)).ts >= '$t1' AND (snowflake_parse(id)).ts < '$t2')
      SELECT (SELECT count(*) FROM by_floor), (SELECT count(*) FROM by_time),
        (SELECT count(*) FROM (TABLE by_floor EXCEPT TABLE by_time) a)
        + (SELECT count(*) FROM (TABLE by_time EXCEPT TABLE by_floor) b)")
    IFS='|' read -r by_floor by_time apart <<<"$differ"
    ((by_floor == by_time && apart == 0 && by_floor > 0)) ||
      fail "$table through $node, [$t1, $t2): $by_floor rows by floor, $by_time by time, $apart apart"
    ranges=$((ranges + 1))
  done
done
figure "$ranges time ranges by snowflake_floor (both tables, through the coordinator and a worker):" \
  "exactly the rows whose parsed time is in range, across all shards"

# 5. A third worker joins with the coordinator's node id in its configuration
# (node_source = setting, node_id = 0). The extension is created on it first, so that the
# reference table's metadata finds it there. Its first mint is refused, through an INSERT
# and alone.
taken=citus$version-worker3 taken_port=$((port + 3))
citus_node "$taken" "$taken_port" snowflake.node_source=setting snowflake.node_id=0
sql "$taken" "CREATE EXTENSION snowflake_pg"
citus_add_worker "$coordinator" "$taken"
refused=0
for statement in "INSERT INTO by_tenant (tenant, via) VALUES (2, $taken_port)" "SELECT snowflake_next()"; do
  out=$(sql "$taken" "$statement" 2>&1) && fail "$taken, with node id 0, ran: $statement"
  [[ $out == *"node id 0 is claimed by another server"* ]] ||
    fail "$taken, with node id 0, for $statement: $out"
  refused=$((refused + 1))
done
[[ $(sql "$coordinator" "SELECT count(*) FROM by_tenant WHERE via = $taken_port") == 0 ]] ||
  fail "a row went in through $taken"
figure "a worker joining with the coordinator's node id: first mint refused ($refused of $refused" \
  "statements: \"node id 0 is claimed by another server\")"

# 6. A claim made in a transaction that rolls back is gone: the next mint claims again.
# The new worker has no placement of the reference table (Citus copies reference tables
# to a new node only when a shard operation needs them), so its claims are written and
# read on the other nodes. Node id 3 is free.
placements=$(sql "$coordinator" "SELECT count(*) FROM pg_dist_placement p JOIN pg_dist_shard s
  USING (shardid) JOIN pg_dist_node n USING (groupid)
  WHERE s.logicalrelid = 'snowflake_nodes'::regclass AND n.nodeport = $taken_port")
((placements == 0)) || fail "$taken has $placements placements of snowflake_nodes, expected none yet"
sql "$taken" "SET snowflake.node_id = 3" -c "BEGIN" -c "SELECT snowflake_next()" -c "ROLLBACK" >/dev/null
sql "$taken" "SET snowflake.node_id = 3" -c "SELECT snowflake_next()" >/dev/null
holder=$(sql "$coordinator" "SELECT system_identifier FROM snowflake_nodes WHERE node_id = 3")
[[ $holder == "$(sql "$taken" "SELECT system_identifier FROM pg_control_system()")" ]] ||
  fail "after a claim rolled back and a new mint, snowflake_nodes gives node 3 to '$holder', not to $taken"
figure "a claim rolled back on a worker without a placement of snowflake_nodes: claimed again at the next mint"

# 7. A Citus server not yet in the cluster reads group id 0, the coordinator's: its mints are
# refused until it has joined. A session refused before the join settles its node id
# again after it: here as group 4, which does not fit the 2 node bits, so refused again,
# for that reason; never minting as node 0.
late=citus$version-worker4 late_port=$((port + 4))
citus_node "$late" "$late_port" snowflake.node_source=citus
sql "$late" "CREATE EXTENSION snowflake_pg"
out=$(cluster_psql "$late" -qAt -v ON_ERROR_STOP=0 2>&1 <<SQL
SELECT 'before: ' || (snowflake_parse(snowflake_next())).node_id;
\! $(pg_bin_of "$version")/psql -qAt -h $CLUSTERS_DIR/$coordinator -p $port -U postgres -c "SELECT citus_add_node('127.0.0.1', $late_port)" >/dev/null
SELECT 'group: ' || groupid FROM pg_dist_local_group;
SELECT 'after: ' || (snowflake_parse(snowflake_next())).node_id;
SQL
)
group=$(sed -n 's/^group: //p' <<<"$out")
((group == 4)) || { echo "$out"; fail "$late joined as group '$group', expected 4"; }
grep -q '^ERROR:  this node is not in a Citus cluster yet: it reads group id 0, the coordinator.s, and knows no other node' <<<"$out" ||
  { echo "$out"; fail "$late minted before it joined the cluster"; }
grep -q "^ERROR:  this node's Citus group id 4 does not fit in the 2 node bits" <<<"$out" ||
  { echo "$out"; fail "a session of $late refused before the join was not refused for its new group 4"; }
figure "a server not yet in the cluster: mints refused (group 0, no other node known); the same" \
  "session after the join: refused for its new group 4 (2 node bits), never node 0"

for node in "${nodes[@]}" "$taken" "$late"; do check_log "$node"; done
