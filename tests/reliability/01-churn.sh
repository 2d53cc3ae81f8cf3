#!/usr/bin/env bash
# Connection churn: 32 clients, a new connection for every transaction, so that backend
# slots change hands over and over (the figure says how often) while ids are minted into one
# primary key.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=churn$version port=$((port_base + 1)) clients=32 seconds=${CHURN_SECONDS:-15}
# Emulated, 32 backends starting at once share 2 cores for seconds each: 8 clients make
# more connections in the same time, and 12 connections at most (from 17 on, freed slots
# are handed out in turn over all of them) let each slot change hands several times.
settings=()
if $emulated; then clients=8 settings=(max_connections=12); fi

start "$name" "$port" "${settings[@]}"
sql "$name" "CREATE EXTENSION snowflake_pg; $minted_table"
script=$CLUSTERS_DIR/$name/insert.sql
echo "INSERT INTO minted DEFAULT VALUES; INSERT INTO minted DEFAULT VALUES;" >"$script"
result=$(pgbench_run "$name" -c "$clients" -j 2 -C -T "$seconds" -f "$script") || fail "pgbench failed"
read -r _ connections failed <<<"$result"
((failed == 0)) || fail "$failed transactions failed"

rows=$(check_distinct "$name" minted)
((rows == 2 * connections)) || fail "$rows rows for $connections transactions of 2 rows"
slots=$(sql "$name" "SELECT count(DISTINCT (snowflake_parse(id)).backend_slot) FROM minted")
check_log "$name"
figure "$clients clients, $connections connections in $seconds s over $slots backend slots" \
  "(each reused $((connections / slots)) times on average), $rows ids, 0 duplicates"
