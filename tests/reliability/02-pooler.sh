#!/usr/bin/env bash
# Pooler resets: what a connection pooler runs between the statements of its clients
# (DISCARD ALL, RESET ALL, pg_advisory_unlock_all(), SET ROLE) must not disturb a
# backend's generator: its ids stay distinct and keep increasing.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=pooler$version port=$((port_base + 2)) clients=8 seconds=${POOLER_SECONDS:-6}

start "$name" "$port"
sql "$name" "CREATE EXTENSION snowflake_pg; $minted_table;
  CREATE ROLE app; GRANT INSERT ON minted TO app; GRANT USAGE ON SEQUENCE minted_n_seq TO app"
script=$CLUSTERS_DIR/$name/session.sql
cat >"$script" <<'SQL'
INSERT INTO minted DEFAULT VALUES;
DISCARD ALL;
INSERT INTO minted SELECT FROM generate_series(1, 50);
SELECT pg_advisory_lock(:client_id);
RESET ALL;
INSERT INTO minted DEFAULT VALUES;
SELECT pg_advisory_unlock_all();
SET ROLE app;
INSERT INTO minted SELECT FROM generate_series(1, 50);
RESET ROLE;
SET snowflake.node_id = 1;
INSERT INTO minted DEFAULT VALUES;
DISCARD ALL;
SQL
result=$(pgbench_run "$name" -c "$clients" -j 2 -T "$seconds" -f "$script") || fail "pgbench failed"
read -r _ sessions _ <<<"$result"

rows=$(check_distinct "$name" minted)
((rows == 103 * sessions)) || fail "$rows rows for $sessions rounds of 103"
check_increasing "$name" minted
nodes=$(sql "$name" "SELECT string_agg(DISTINCT (snowflake_parse(id)).node_id::text, ',') FROM minted")
[[ $nodes == 0,1 ]] || fail "node ids $nodes, expected 0 and 1 (SET and DISCARD ALL)"
check_log "$name"
figure "$clients clients, $sessions rounds of 5 resets each, $rows ids, 0 duplicates," \
  "increasing within every backend; node id follows SET and DISCARD ALL"
