#!/usr/bin/env bash
# Logical replication: many servers, one id space, node ids claimed in snowflake_nodes.
# Fan-in: three servers with node ids 1, 2 and 3 insert into one table at once while
# publishing it, with their claims, into a hub that subscribes to all three: every row
# and claim arrives, with no replication error or conflict and no duplicate id. A server
# set up later with a taken node id, given the hub's claims before its first write, is
# refused on its first call; two servers set up at once with the same free node id both
# mint, and the hub's subscription to the second stops on its claim, loudly.
# Both ways (origin = none, PostgreSQL 16 on): two servers replicate the table and their
# claims to each other while both insert: each ends with every row of both. A third
# server with a taken node id is refused once the claims reach it; two servers claiming
# one node id before either claim is delivered both stop replicating, loudly.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
seconds=${LR_SECONDS:-10} clients=4

# Logical decoding on every server, room for the hub's subscriptions, and the process
# type in each log line (see common.sh).
settings=(wal_level=logical max_logical_replication_workers=8 max_worker_processes=16
  "log_line_prefix='%m [%p] %b '")
events="CREATE TABLE events (id bigint PRIMARY KEY DEFAULT snowflake_next(),
  server text NOT NULL DEFAULT current_setting('cluster_name'), payload text)"
script=$CLUSTERS_DIR/lr-insert$version.sql
echo "INSERT INTO events (payload) SELECT 'event' FROM generate_series(1, 10);" >"$script"

# server NAME PORT NODE_ID: a fresh server named NAME with the extension and the table,
# and a publication of both the table and the claims.
server() {
  start "$1" "$2" "${settings[@]}" "cluster_name=$1" "snowflake.node_id=$3"
  sql "$1" "CREATE EXTENSION snowflake_pg; $events;
    CREATE PUBLICATION feed FOR TABLE events, snowflake_nodes"
}

# insert_all SECONDS NAME...: $clients clients insert into events on every server NAME
# at once, for SECONDS.
insert_all() {
  local seconds=$1 name pids=() pid; shift
  for name in "$@"; do
    pgbench_run "$name" -c "$clients" -j 2 -T "$seconds" -f "$script" >/dev/null &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || fail "pgbench failed on one of $*"; done
}

# count_rows NAME [SERVER]: the rows of events on NAME, only those minted on SERVER if given.
count_rows() { sql "$1" "SELECT count(*) FROM events WHERE server = coalesce(nullif('${2:-}', ''), server)"; }

# nodes NAME: each server of NAME's events with the node ids of its ids, as "server:node,...".
nodes() {
  sql "$1" "SELECT string_agg(server || ':' || node, ',' ORDER BY server, node) FROM
    (SELECT DISTINCT server, (snowflake_parse(id)).node_id AS node FROM events) s"
}

# claims NAME: the claims NAME holds, as "node:server,...".
claims() { sql "$1" "SELECT string_agg(node_id || ':' || server, ',' ORDER BY node_id) FROM snowflake_nodes"; }

# clean NAME...: no error at all in each server's log (a replication conflict is one, as
# is a duplicate key) and no error or conflict counted by its subscriptions.
clean() {
  local name errors
  for name in "$@"; do
    check_log "$name"
    if errors=$(grep -m 3 ERROR "$CLUSTERS_DIR/$name/server.log"); then fail "$name logged: $errors"; fi
    errors=$(subscription_stats "$name")
    [[ $errors == 0 ]] || fail "the subscriptions of $name counted $errors errors and conflicts"
  done
}

# refused NAME HOLDER: NAME's first call is refused, naming HOLDER as the node id's holder,
# and NAME has written neither a row nor a claim of its own.
refused() {
  local out
  out=$(cluster_psql "$1" -qAt -v ON_ERROR_STOP=0 -v VERBOSITY=verbose \
    -c "INSERT INTO events (payload) VALUES ('refused')" 2>&1) || true
  if ! grep -q 'is claimed by another server' <<<"$out" || ! grep -q "Server \"$2\"" <<<"$out"; then
    echo "$out"; fail "$1 was not refused as holding $2's node id"
  fi
  [[ $(count_rows "$1" "$1") == 0 ]] || fail "$1 wrote rows with a taken node id"
  [[ $(sql "$1" "SELECT count(*) FROM snowflake_nodes
      WHERE system_identifier = (SELECT system_identifier FROM pg_control_system())") == 0 ]] ||
    fail "$1 claimed a taken node id"
}

# clash NAME: the error that stopped a subscription of NAME on a node id claimed twice, as
# NAME's log gives it: a unique violation (23505) on snowflake_nodes, told as a duplicate
# key up to PostgreSQL 17 and as an insert_exists conflict from 18 on.
clash() { replication_errors "$1" | grep -m 1 -o '23505: .*snowflake_nodes.*'; }
clashed() { clash "$1" >/dev/null; }

# errors_counted NAME COUNT: COUNT subscriptions of NAME have counted apply errors.
errors_counted() {
  [[ $(sql "$1" "SELECT count(*) FROM pg_stat_subscription_stats WHERE apply_error_count > 0") == "$2" ]]
}

# shared_ids NAME OTHER: how many ids of NAME's events OTHER's events hold too.
shared_ids() {
  sql "$1" "CREATE TABLE ids_of_other (id bigint)"
  sql "$2" "COPY (SELECT id FROM events) TO STDOUT" | sql "$1" "COPY ids_of_other FROM STDIN"
  sql "$1" "SELECT count(*) FROM events JOIN ids_of_other USING (id)"
}

# --- Fan-in: the hub collects the rows and the claims; it mints nothing itself.
hub=lr-hub$version
server "$hub" $((port_base + 28)) 0

# join_hub NAME PORT NODE_ID: the setup of a server feeding the hub, before it writes
# anything: the claims the hub holds copied in, so that its first call is checked against
# them; then the hub subscribes to it, without copying (there is nothing to copy yet, and
# a copy would send the hub its own claims back).
join_hub() {
  server "$1" "$2" "$3"
  sql "$hub" "COPY snowflake_nodes TO STDOUT" | sql "$1" "COPY snowflake_nodes FROM STDIN"
  subscribe "$hub" "$1" feed "copy_data = false"
}

publishers=() expected_nodes="" expected_claims=""
for node in 1 2 3; do
  name=lr-node$node-$version
  publishers+=("$name")
  expected_nodes+=${expected_nodes:+,}$name:$node expected_claims+=${expected_claims:+,}$node:$name
  join_hub "$name" $((port_base + 28 + node)) "$node"
done
insert_all "$seconds" "${publishers[@]}"
for name in "${publishers[@]}"; do replicated "$hub" "$name"; done

total=0 arrived=()
for name in "${publishers[@]}"; do
  minted=$(count_rows "$name") at_hub=$(count_rows "$hub" "$name")
  ((minted == at_hub)) || fail "$name minted $minted rows, $at_hub of them reached the hub"
  total=$((total + minted)) arrived+=("$at_hub")
done
((total > 0)) || fail "nothing was minted"
rows=$(check_distinct "$hub" events)
((rows == total)) || fail "the hub holds $rows rows, the publishers $total"
[[ $(nodes "$hub") == "$expected_nodes" ]] ||
  fail "node ids by server at the hub: $(nodes "$hub"), expected $expected_nodes"
[[ $(claims "$hub") == "$expected_claims" ]] || fail "claims at the hub: $(claims "$hub"), expected $expected_claims"
clean "$hub" "${publishers[@]}"
figure "fan-in: 3 servers (node ids 1, 2, 3), $clients clients each for $seconds s, into a" \
  "fourth: $rows rows arrived of $total minted (per server: ${arrived[*]}), 0 duplicates," \
  "0 replication errors or conflicts; the hub holds the 3 claims"

# A fourth server set up with node id 2, which lr-node2 holds.
taken=lr-taken$version
join_hub "$taken" $((port_base + 32)) 2
refused "$taken" "${publishers[1]}"
replicated "$hub" "$taken"
[[ $(claims "$hub") == "$expected_claims" ]] || fail "claims at the hub after the refusal: $(claims "$hub")"
clean "$hub"
figure "fan-in, a server set up with node id 2 (taken): its first call refused, naming the" \
  "holder; no row or claim of it reached the hub"

# Two servers set up at once with node id 0, free at the hub when both copied its claims:
# both mint, and the claim that reaches the hub second stops that server's subscription,
# every row of it held back.
clash=("lr-clash1-$version" "lr-clash2-$version")
join_hub "${clash[0]}" $((port_base + 33)) 0
join_hub "${clash[1]}" $((port_base + 34)) 0
insert_all 2 "${clash[@]}"
eventually "the hub did not report the node id claimed twice" clashed "$hub"
eventually "no subscription of the hub counted the clash" errors_counted "$hub" 1
stopped=$(sql "$hub" "SELECT subname FROM pg_stat_subscription_stats WHERE apply_error_count > 0")
winner=$(sql "$hub" "SELECT server FROM snowflake_nodes WHERE node_id = 0")
loser=${clash[0]}
[[ $winner == "${clash[0]}" ]] && loser=${clash[1]}
[[ $stopped == "$(subscription "$hub" "$loser")" && $winner == lr-clash* ]] ||
  fail "the hub holds node 0 for '$winner' but subscription $stopped stopped"
[[ $(count_rows "$hub" "$loser") == 0 ]] || fail "rows of $loser reached the hub past its clashing claim"
shared=$(shared_ids "${clash[@]}")
figure "fan-in, two servers set up at once with node id 0: both minted ($(count_rows "${clash[0]}")" \
  "and $(count_rows "${clash[1]}") rows, $shared ids in common); the hub took $winner's claim" \
  "and stopped its subscription to $loser, none of $loser's rows applied: $(clash "$hub")"
for name in "$hub" "${publishers[@]}" "$taken" "${clash[@]}"; do cluster_stop "$name"; done

# --- Both ways: needs origin = none, without which each server would send the other's
# rows back to it.
if ((version < 16)); then
  echo "  SKIP both ways: origin = none, which keeps each server from sending the other's rows back, needs PostgreSQL 16"
  figure "both ways: SKIP, origin = none needs PostgreSQL 16"
  exit 0
fi

# pair A B: each of servers A and B subscribes to the other's feed, only to what was
# written there (origin = none), without copying: set up before either writes.
pair() {
  subscribe "$1" "$2" feed "origin = none, copy_data = false"
  subscribe "$2" "$1" feed "origin = none, copy_data = false"
}

left=lr-left$version right=lr-right$version
server "$left" $((port_base + 28)) 1
server "$right" $((port_base + 29)) 2
pair "$left" "$right"
insert_all "$seconds" "$left" "$right"
replicated "$left" "$right"
replicated "$right" "$left"

left_rows=$(count_rows "$left" "$left") right_rows=$(count_rows "$right" "$right")
both=$((left_rows + right_rows))
for name in "$left" "$right"; do
  rows=$(check_distinct "$name" events)
  ((rows == both)) || fail "$name holds $rows rows of the $both both servers minted"
  [[ $(nodes "$name") == "$left:1,$right:2" ]] || fail "node ids by server on $name: $(nodes "$name")"
  [[ $(claims "$name") == "1:$left,2:$right" ]] || fail "claims on $name: $(claims "$name")"
done
[[ $(count_rows "$left" "$right") == "$right_rows" && $(count_rows "$right" "$left") == "$left_rows" ]] ||
  fail "the two servers disagree on each other's rows"
clean "$left" "$right"
figure "both ways (origin = none): 2 servers (node ids 1, 2), $clients clients each for" \
  "$seconds s: each holds all $both rows ($left_rows + $right_rows) and both claims," \
  "0 duplicates, 0 replication errors or conflicts"

# A third server with node id 2 joins the left one both ways, copying its rows and
# claims first: right's claim reaches it through left, and its first call is refused.
# (PostgreSQL warns that this copy may hold rows of other origins: right's claim is one.)
late=lr-late$version
server "$late" $((port_base + 30)) 2
subscribe "$late" "$left" feed "origin = none"
subscribe "$left" "$late" feed "origin = none, copy_data = false"
refused "$late" "$right"
replicated "$left" "$late"
[[ $(claims "$left") == "1:$left,2:$right" ]] || fail "claims on $left after the refusal: $(claims "$left")"
clean "$left"
if errors=$(replication_errors "$late"); then fail "replication into $late failed: $errors"; fi
figure "both ways, a third server set up with node id 2 (held by $right): refused once" \
  "the claims reached it through $left, nothing of it replicated back"

# Two servers both ways, both given node id 3, both minting before either claim is
# delivered (their subscriptions made disabled, enabled once both have minted): each
# server's subscription stops on the other's claim.
twins=("lr-twin1-$version" "lr-twin2-$version")
server "${twins[0]}" $((port_base + 31)) 3
server "${twins[1]}" $((port_base + 32)) 3
for i in 0 1; do
  sql "${twins[i]}" "SET client_min_messages = warning" -c "CREATE SUBSCRIPTION $(subscription "${twins[i]}" "${twins[1 - i]}")
    CONNECTION '$(cluster_conninfo "${twins[1 - i]}")' PUBLICATION feed
    WITH (origin = none, copy_data = false, enabled = false)"
done
insert_all 2 "${twins[@]}"
for i in 0 1; do sql "${twins[i]}" "ALTER SUBSCRIPTION $(subscription "${twins[i]}" "${twins[1 - i]}") ENABLE"; done
for name in "${twins[@]}"; do
  eventually "$name did not report the node id claimed twice" clashed "$name"
  eventually "the subscription of $name did not count the clash" errors_counted "$name" 1
done
shared=$(shared_ids "${twins[@]}")
figure "both ways, two servers given node id 3 minting before either claim was delivered:" \
  "$(count_rows "${twins[0]}") and $(count_rows "${twins[1]}") rows, $shared ids in common;" \
  "each stopped its subscription to the other: $(clash "${twins[0]}")"
