#!/usr/bin/env bash
# Node claims across servers (snowflake_nodes). 1. Independent servers sharing one
# registry through postgres_fdw: two servers minting at once each hold their claim there,
# with no id in common; a third claim of a taken node id is refused, naming its holder; a
# claim rolled back leaves no row and the next mint makes it, with and without preload.
# 2. pg_dump and pg_restore carry the claims (a configuration table) into a new server,
# which is refused the node id until the old claim is released. 3. With preload a claim
# is remembered for the server's life, without it each backend claims. 4. A promoted
# standby keeps its primary's system identifier, and so mints under its primary's claim.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fdw_control=$("$(pg_config_of "$version")" --sharedir)/extension/postgres_fdw.control
if [[ ! -f $fdw_control ]]; then
  echo "SKIP: postgres_fdw is not installed in PostgreSQL $version ($fdw_control; the pgserver wheel of 16 has few contrib modules)"
  exit 0
fi
preload=shared_preload_libraries=snowflake_pg

# server NAME PORT [setting=value ...]: a fresh server named NAME in claims (its
# cluster_name), with the extension created.
server() {
  local name=$1 port=$2; shift 2
  start "$name" "$port" "cluster_name=$name" "$@"
  sql "$name" "CREATE EXTENSION snowflake_pg"
}

# use_registry NAME REGISTRY: the DBA's steps that make NAME claim its node ids in the
# snowflake_nodes of running server REGISTRY, through postgres_fdw: the extension's table
# swapped for a foreign table of the same name, the status view (which reads it) made
# again over it, both kept members of the extension. The user mapping is the extension
# owner's, the role the claims are written as, whoever mints.
use_registry() {
  cluster_psql "$1" -q <<SQL
CREATE EXTENSION postgres_fdw;
CREATE SERVER snowflake_registry FOREIGN DATA WRAPPER postgres_fdw
  OPTIONS (host '$CLUSTERS_DIR/$2', port '$(cluster_port "$2")', dbname 'postgres');
CREATE USER MAPPING FOR postgres SERVER snowflake_registry OPTIONS (user 'postgres');
BEGIN;
DO \$\$
DECLARE
  status_view text := pg_get_viewdef('snowflake_status');
BEGIN
  ALTER EXTENSION snowflake_pg DROP VIEW snowflake_status;
  ALTER EXTENSION snowflake_pg DROP TABLE snowflake_nodes;
  DROP VIEW snowflake_status;
  DROP TABLE snowflake_nodes;
  CREATE FOREIGN TABLE snowflake_nodes (
    node_id integer NOT NULL,
    system_identifier bigint NOT NULL,
    server text NOT NULL,
    layout text NOT NULL,
    epoch timestamptz NOT NULL,
    claimed_at timestamptz NOT NULL
  ) SERVER snowflake_registry OPTIONS (table_name 'snowflake_nodes');
  GRANT SELECT ON snowflake_nodes TO PUBLIC;
  EXECUTE 'CREATE VIEW snowflake_status AS ' || status_view;
  GRANT SELECT ON snowflake_status TO PUBLIC;
  ALTER EXTENSION snowflake_pg ADD FOREIGN TABLE snowflake_nodes;
  ALTER EXTENSION snowflake_pg ADD VIEW snowflake_status;
END
\$\$;
COMMIT;
SQL
}

# system_id NAME: the system identifier of server NAME.
system_id() { sql "$1" "SELECT system_identifier FROM pg_control_system()"; }

# claims NAME: the claims in NAME's snowflake_nodes, as "node:server,...".
claims() { sql "$1" "SELECT string_agg(node_id || ':' || server, ',' ORDER BY node_id) FROM snowflake_nodes"; }

# holder REGISTRY NODE: the system identifier holding NODE in REGISTRY's snowflake_nodes.
holder() { sql "$1" "SELECT system_identifier FROM snowflake_nodes WHERE node_id = $2"; }

# refused NAME NODE HOLDER: a new session of NAME minting with NODE is refused (55000),
# naming server HOLDER and the way out; prints the error.
refused() {
  local out
  out=$(sql "$1" "SET snowflake.node_id = $2" -c "SELECT snowflake_next()" -v VERBOSITY=verbose 2>&1) &&
    fail "$1 minted with node $2, which $3 holds: $out"
  [[ $out == *"ERROR:  55000: node id $2 is claimed by another server"* &&
    $out == *"DETAIL:  Server \"$3\" (system identifier $(system_id "$3")) claimed it"* &&
    $out == *"snowflake_release_node($2)"* ]] || fail "$1 with node $2: not the refusal naming $3: $out"
  echo "$out"
}

# waiting_claims REGISTRY: whether a claim written through postgres_fdw waits on REGISTRY
# for another transaction's claim of the same node id.
waiting_claims() {
  [[ $(sql "$1" "SELECT count(*) FROM pg_stat_activity
    WHERE application_name = 'postgres_fdw' AND wait_event_type = 'Lock'") == 1 ]]
}

# race FIRST SECOND NODE REGISTRY: FIRST claims NODE in a transaction left open; SECOND
# (another server or FIRST again) then mints with NODE, and its claim waits on the
# registry; FIRST commits. Prints what SECOND's call printed, which must be an error.
race() {
  local first=$1 second=$2 node=$3 registry=$4 flags=$CLUSTERS_DIR/$1/race-$3 holder waiter
  rm -f "$flags".*
  sql "$first" "SET snowflake.node_id = $node" -c "BEGIN" -c "SELECT snowflake_next()" \
    -c "\\! touch $flags.written; until [ -e $flags.commit ]; do sleep 0.05; done" -c "COMMIT" >/dev/null &
  holder=$!
  eventually "$first did not claim node $node" test -e "$flags.written"
  sql "$second" "SET snowflake.node_id = $node" -c "SELECT snowflake_next()" \
    -v VERBOSITY=verbose >"$flags.out" 2>&1 &
  waiter=$!
  eventually "the claim of $second did not wait for that of $first" waiting_claims "$registry"
  touch "$flags.commit"
  wait "$holder" || fail "$first could not commit its claim of node $node"
  if wait "$waiter"; then fail "$second minted with node $node while $first committed its claim"; fi
  cat "$flags.out"
}

# rolled_back NAME REGISTRY NODE_SAME NODE_NEW: a claim of NAME rolled back leaves no row
# in REGISTRY, and the next mint makes it: in the same session (NODE_SAME), and in a new
# one (NODE_NEW), which with preload shows the claim was not remembered.
rolled_back() {
  local name=$1 registry=$2 same=$3 new=$4 own out
  own=$(system_id "$name")
  out=$(sql "$name" "SET snowflake.node_id = $same" -c "BEGIN" -c "SELECT snowflake_next() > 0" \
    -c "ROLLBACK" -c "SELECT count(*) FROM snowflake_nodes WHERE node_id = $same" \
    -c "SELECT snowflake_next() > 0" | paste -sd ' ')
  [[ $out == "t 0 t" ]] || fail "$name, node $same: minted, claims after the rollback, minted: $out"
  [[ $(holder "$registry" "$same") == "$own" ]] || fail "$name: no claim of node $same after the rollback and a mint"
  [[ $(sql "$name" "SET snowflake.node_id = $new" -c "BEGIN" -c "SELECT snowflake_next() > 0" -c "ROLLBACK") == t ]]
  [[ -z $(holder "$registry" "$new") ]] || fail "$name: a claim of node $new is left after its rollback"
  [[ $(sql "$name" "SET snowflake.node_id = $new" -c "SELECT snowflake_next() > 0") == t ]]
  [[ $(holder "$registry" "$new") == "$own" ]] ||
    fail "$name: a new session minting after a rolled-back claim of node $new did not claim it"
}

# --- 1. A registry across independent servers, through postgres_fdw ---------------------
# The default layout has 4 node ids: A mints as 1, B as 2; 3 and 0 are raced for, freed,
# and taken again by the claims rolled back.
registry=nc-registry$version a=nc-a$version b=nc-b$version
server "$registry" $((port_base + 38))
server "$a" $((port_base + 46)) snowflake.node_id=1
server "$b" $((port_base + 47)) snowflake.node_id=2
script=$CLUSTERS_DIR/$a/insert.sql
echo "INSERT INTO minted SELECT FROM generate_series(1, 100);" >"$script"
for name in "$a" "$b"; do
  use_registry "$name" "$registry"
  sql "$name" "$minted_table"
done
# The first calls of a server's clients claim its node id at once: all but one wait on the
# registry for the first claim and fail with 40001 once it commits (postgres_fdw works in
# repeatable read), which a client retries, as it must any serialization failure.
pids=()
for name in "$a" "$b"; do
  pgbench_run "$name" -c 4 -j 2 -T 5 --max-tries 10 -f "$script" >"$CLUSTERS_DIR/$name/pgbench.out" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "pgbench failed on $a or $b"; done
for name in "$a" "$b"; do
  read -r _ transactions failed <"$CLUSTERS_DIR/$name/pgbench.out"
  ((failed == 0)) || fail "$name: $failed transactions failed after 10 tries"
  retried=$(sed -n 's/^number of transactions retried: \([0-9]*\).*/\1/p' "$CLUSTERS_DIR/$name"/pgbench.*.log)
  figure "$name, 4 clients for 5 s: $transactions transactions, ${retried:-0} retried on 40001, 0 failed"
done
[[ $(claims "$registry") == "1:$a,2:$b" ]] || fail "claims in the registry: $(claims "$registry"), not 1:$a,2:$b"
[[ $(holder "$registry" 1) == "$(system_id "$a")" && $(holder "$registry" 2) == "$(system_id "$b")" &&
  $(system_id "$a") != "$(system_id "$b")" ]] || fail "the claims do not hold the system identifiers of $a and $b"
sql "$a" "CREATE TABLE from_b (id bigint)"
sql "$b" "COPY minted (id) TO STDOUT" | sql "$a" "COPY from_b FROM STDIN"
sql "$a" "CREATE TABLE both_servers AS SELECT id FROM minted UNION ALL SELECT id FROM from_b"
rows=$(check_distinct "$a" both_servers)
[[ $(sql "$a" "SELECT string_agg(DISTINCT (snowflake_parse(id)).node_id::text, ',') FROM both_servers") == 1,2 ]] ||
  fail "the ids of $a and $b are not of nodes 1 and 2"
figure "$a (node 1) and $b (node 2) claimed in the registry $registry through postgres_fdw, with" \
  "distinct system identifiers; $rows ids minted at once, 0 duplicates"

refused "$b" 1 "$a" >/dev/null
figure "$b minting with node 1: refused (55000), naming $a and snowflake_release_node(1)"

# Two claims of one node id at the same instant: the second is a serialization failure,
# and its retry the refusal (from another server) or the mint (from the same one).
out=$(race "$a" "$b" 3 "$registry")
[[ $out == *"ERROR:  40001: could not serialize access due to concurrent update"* ]] ||
  fail "$b claiming node 3 at the same instant as $a: not a serialization failure: $out"
refused "$b" 3 "$a" >/dev/null
out=$(race "$a" "$a" 0 "$registry")
[[ $out == *"ERROR:  40001: could not serialize access due to concurrent update"* ]] ||
  fail "two sessions of $a claiming node 0 at the same instant: not a serialization failure: $out"
[[ $(sql "$a" "SET snowflake.node_id = 0" -c "SELECT (snowflake_parse(snowflake_next())).node_id") == 0 ]] ||
  fail "$a could not mint with node 0 after claiming it"
figure "a claim waiting on another's of the same node id: 40001 when that one commits; the retry" \
  "is refused naming $a (from $b) or mints (from $a itself)"

[[ $(sql "$registry" "SELECT snowflake_release_node(3) AND snowflake_release_node(0)") == t ]]
rolled_back "$b" "$registry" 3 0
[[ $(sql "$registry" "SELECT snowflake_release_node(3) AND snowflake_release_node(0)") == t ]]
cluster_stop "$b"
cluster_launch "$b" $((port_base + 47)) log_error_verbosity=verbose "cluster_name=$b" snowflake.node_id=2 "$preload"
[[ $(sql "$b" "SELECT preloaded FROM snowflake_status") == t ]] || fail "$b did not preload the library"
rolled_back "$b" "$registry" 3 0
[[ $(sql "$b" "SELECT node_claimed FROM snowflake_status") == t ]] || fail "$b does not see its claim"
figure "a claim rolled back on $b leaves no row in the registry; the next mint claims, in the" \
  "same session and in a new one, with and without preload"
for name in "$registry" "$a" "$b"; do
  check_log "$name"
  cluster_stop "$name"
done

# --- 2. pg_dump and pg_restore into a fresh server ----------------------------------------
plain=nc-plain$version restored=nc-restored$version
server "$plain" $((port_base + 48)) snowflake.node_id=1
sql "$plain" "$minted_table; INSERT INTO minted SELECT FROM generate_series(1, 1000)"
dump=$CLUSTERS_DIR/$plain/postgres.dump
"$(pg_bin_of "$version")/pg_dump" -h "$CLUSTERS_DIR/$plain" -p "$(cluster_port "$plain")" -U postgres \
  -Fc -f "$dump" postgres
start "$restored" $((port_base + 49)) "cluster_name=$restored" snowflake.node_id=1
"$(pg_bin_of "$version")/pg_restore" -h "$CLUSTERS_DIR/$restored" -p "$(cluster_port "$restored")" \
  -U postgres --exit-on-error -d postgres "$dump"
every_claim="SELECT string_agg(format('%s', n), ',' ORDER BY node_id) FROM snowflake_nodes n"
[[ $(sql "$restored" "$every_claim") == "$(sql "$plain" "$every_claim")" ]] ||
  fail "the claims restored on $restored differ from those of $plain"
refused "$restored" 1 "$plain" >/dev/null
[[ $(sql "$restored" "SELECT count(*) FROM minted") == 1000 ]] || fail "$restored minted while refused"
[[ $(sql "$restored" "SELECT snowflake_release_node(1)") == t ]]
sql "$restored" "INSERT INTO minted SELECT FROM generate_series(1, 1000)"
[[ $(claims "$restored") == "1:$restored" && $(holder "$restored" 1) == "$(system_id "$restored")" ]] ||
  fail "after the release, the claims on $restored are $(claims "$restored")"
rows=$(check_distinct "$restored" minted)
figure "pg_dump of $plain, pg_restore into a fresh server: its claim came along; the new server" \
  "(another system identifier) minting with node 1 was refused naming $plain until" \
  "snowflake_release_node(1), then claimed it; $rows ids, 0 duplicates"
for name in "$plain" "$restored"; do
  check_log "$name"
  cluster_stop "$name"
done

# --- 3. With preload a claim is remembered for the server's life -------------------------
name=nc-remember$version port=$((port_base + 39))
# mint_then_claims: a new session mints, then reads the claims.
mint_then_claims() {
  sql "$name" "SELECT snowflake_next() > 0" \
    -c "SELECT coalesce(string_agg(node_id || ':' || server, ','), 'none') FROM snowflake_nodes" | paste -sd ' '
}
# relaunch [setting=value ...]: the server stopped and started again with the settings.
relaunch() {
  cluster_stop "$name"
  cluster_launch "$name" "$port" log_error_verbosity=verbose "cluster_name=$name" "$@"
}
server "$name" "$port" "$preload"
[[ $(mint_then_claims) == "t 0:$name" ]] || fail "preload: the first mint did not claim node 0"
sql "$name" "DELETE FROM snowflake_nodes"
[[ $(mint_then_claims) == "t none" ]] || fail "preload: a new backend claimed again: $(mint_then_claims)"
[[ $(sql "$name" "SELECT node_claimed FROM snowflake_status") == f ]] || fail "preload: node_claimed with no claim"
relaunch "$preload"
[[ $(mint_then_claims) == "t 0:$name" ]] || fail "preload: after a restart the first mint did not claim again"
relaunch
sql "$name" "DELETE FROM snowflake_nodes"
[[ $(mint_then_claims) == "t 0:$name" ]] || fail "without preload: a new backend did not claim again"
check_log "$name"
cluster_stop "$name"
figure "preload: with its claim deleted by hand, a new backend mints without claiming again" \
  "(node_claimed false); after a restart it claims again; without preload a new backend claims again"

# --- 4. A promoted standby keeps its primary's system identifier --------------------------
primary=nc-primary$version standby=nc-standby$version
server "$primary" $((port_base + 48)) snowflake.node_id=1
sql "$primary" "$minted_table; INSERT INTO minted SELECT FROM generate_series(1, 1000)"
servers+=("$standby")
cluster_standby "$primary" "$standby" $((port_base + 49)) "cluster_name = '$standby'" \
  "snowflake.node_id = 1" "log_error_verbosity = verbose"
replayed() { [[ $(sql "$standby" "SELECT count(*) FROM minted") == 1000 ]]; }
eventually "$standby has not replayed the rows of $primary" replayed
as_pg "$(pg_bin_of "$version")/pg_ctl" -D "$CLUSTERS_DIR/$standby/data" -w promote >/dev/null
[[ $(system_id "$standby") == "$(system_id "$primary")" ]] || fail "$standby has another system identifier"
for name in "$standby" "$primary"; do
  sql "$name" "INSERT INTO minted SELECT FROM generate_series(1, 1000)" ||
    fail "$name was refused node 1 after the promotion"
  [[ $(claims "$name") == "1:$primary" && $(sql "$name" "SELECT node_claimed FROM snowflake_status") == t ]] ||
    fail "$name: claims $(claims "$name") after the promotion, not the one of $primary"
  [[ $(sql "$name" "SELECT count(*) FROM minted WHERE (snowflake_parse(id)).node_id <> 1") == 0 ]] ||
    fail "$name minted ids of a node other than 1"
done
# What the docs advise before a promotion, here after it: a node id of its own.
reload_setting "$standby" snowflake.node_id 2
sql "$standby" "INSERT INTO minted SELECT FROM generate_series(1, 1000)"
[[ $(claims "$standby") == "1:$primary,2:$standby" ]] || fail "$standby with node 2: claims $(claims "$standby")"
for name in "$primary" "$standby"; do check_log "$name"; done
figure "promoted standby: the system identifier of its primary, so it mints as node 1 under the" \
  "primary's claim with no refusal, and so does the old primary (the claims cannot tell them" \
  "apart); given node 2, it claims node 2"
