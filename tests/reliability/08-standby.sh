#!/usr/bin/env bash
# Read-only transactions and a hot standby. Minting writes nothing, so a read-only
# transaction on a primary mints as usual. A standby (a streaming replica started here)
# is a copy of its primary, node id and backend slots alike: it refuses to mint, with a
# clean error, while floor and parse work there as anywhere. Once promoted it mints,
# under the node id it was given, alongside its old primary with no duplicate.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
primary=primary$version standby=standby$version
primary_port=$((port_base + 13)) standby_port=$((port_base + 14))

start "$primary" "$primary_port"
sql "$primary" "CREATE EXTENSION snowflake_pg; $minted_table;
  INSERT INTO minted SELECT FROM generate_series(1, 10000)"
read_only=$(sql "$primary" "SET default_transaction_read_only = on" \
  -c "SELECT count(DISTINCT snowflake_next()) FROM generate_series(1, 1000)")
[[ $read_only == 1000 ]] || fail "a read-only transaction minted $read_only distinct ids of 1000"

# The standby: a base backup of the primary, with a node id of its own for after promotion.
servers+=("$standby")
cluster_standby "$primary" "$standby" "$standby_port" "log_error_verbosity = verbose" "snowflake.node_id = 1"
until [[ $(sql "$standby" "SELECT count(*) FROM minted") == 10000 ]]; do sleep 0.1; done

# One standby session: refused in recovery, then minting once the standby is promoted.
out=$(cluster_psql "$standby" -qAt -v ON_ERROR_STOP=0 -v VERBOSITY=verbose 2>&1 <<SQL
SELECT snowflake_next();
SELECT count(*) FROM minted WHERE id >= snowflake_floor(now() - interval '1 hour')
  AND (snowflake_parse(id)).node_id = 0;
\! runuser -u postgres -- $(pg_bin_of "$version")/pg_ctl -D $CLUSTERS_DIR/$standby/data -w promote >/dev/null
SELECT (snowflake_parse(snowflake_next())).node_id;
SQL
)
grep -q '^ERROR:  25006: cannot mint snowflake ids on a server in recovery' <<<"$out" ||
  { echo "$out"; fail "the standby did not refuse cleanly"; }
grep -qx 10000 <<<"$out" || { echo "$out"; fail "floor and parse failed on the standby"; }
[[ $(tail -n 1 <<<"$out") == 1 ]] || { echo "$out"; fail "the promoted standby did not mint as node 1"; }

# Old primary and promoted standby side by side, then their ids together.
script=$CLUSTERS_DIR/$primary/insert.sql
echo "INSERT INTO side_by_side SELECT FROM generate_series(1, 100);" >"$script"
for server in "$primary" "$standby"; do
  sql "$server" "CREATE TABLE side_by_side (id bigint PRIMARY KEY DEFAULT snowflake_next())"
  pgbench_run "$server" -c 4 -j 2 -T 5 -f "$script" >/dev/null &
done
wait
sql "$primary" "CREATE TABLE from_standby (id bigint)"
sql "$standby" "COPY side_by_side TO STDOUT" |
  sql "$primary" "COPY from_standby FROM STDIN"
sql "$primary" "CREATE TABLE both_servers AS
  SELECT id FROM side_by_side UNION ALL SELECT id FROM from_standby"
rows=$(check_distinct "$primary" both_servers)
nodes=$(sql "$primary" "SELECT string_agg(DISTINCT (snowflake_parse(id)).node_id::text, ',') FROM both_servers")
[[ $nodes == 0,1 ]] || fail "node ids $nodes after promotion, expected 0 and 1"
check_log "$primary"
check_log "$standby"
figure "read-only transaction: 1000 ids minted; standby: clean refusal (25006), floor and parse" \
  "work; promoted as node 1, the same session mints; old primary and promoted standby," \
  "4 clients each for 5 s: $rows ids, 0 duplicates"
