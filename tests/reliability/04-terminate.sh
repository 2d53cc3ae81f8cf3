#!/usr/bin/env bash
# Backends terminated mid-insert with pg_terminate_backend(): each client reconnects at
# once, so a new backend takes over the slot just freed. The terminated transactions
# roll back; every committed id stays distinct.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=terminate$version port=$((port_base + 4)) clients=16 seconds=${TERMINATE_SECONDS:-10}
least=50 batch=20000
# Emulated, a backend takes a second or more to start, and 16 inserts of 20,000 ids at once
# a minute or two to end after the deadline: 8 clients, batches of 2,000, twice the time,
# and at least 10 terminated.
if $emulated; then clients=8 batch=2000 seconds=$((seconds * 2)) least=10; fi

start "$name" "$port"
sql "$name" "CREATE EXTENSION snowflake_pg; $minted_table"
deadline=$((SECONDS + seconds))
client() { # inserts of $batch rows, each in a new connection, until the deadline
  while ((SECONDS < deadline)); do
    sql "$name" "INSERT INTO minted SELECT FROM generate_series(1, $batch)" 2>/dev/null || true
  done
}
for _ in $(seq "$clients"); do client & done

terminated=0
while ((SECONDS < deadline)); do
  killed=$(sql "$name" "SELECT count(pg_terminate_backend(pid)) FROM (SELECT pid
    FROM pg_stat_activity WHERE query LIKE 'INSERT INTO minted%' AND pid <> pg_backend_pid()
    ORDER BY random() LIMIT 2) s")
  terminated=$((terminated + killed))
  sleep 0.05
done
wait

rows=$(check_distinct "$name" minted)
((terminated >= least)) || fail "only $terminated backends were terminated, not $least"
((rows > 0 && rows % batch == 0)) || fail "$rows rows: a terminated insert left part of its rows"
check_log "$name"
figure "$clients clients reconnecting at once, $terminated backends terminated mid-insert" \
  "in $seconds s, $((rows / batch)) inserts of $batch committed, $rows ids, 0 duplicates"
