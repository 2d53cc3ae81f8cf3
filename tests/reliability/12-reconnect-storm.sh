#!/usr/bin/env bash
# A storm of reconnections right after a start, a clean restart and a crash restart, on a
# server that preloads the library. Every slot mark starts snowflake.max_lead_ms ahead of
# the clock, so each backend of the first second mints ahead of it. Had backends still
# waited at exit for the clock to reach their last id, each would hold its slot for up to
# a second, and clients reconnecting for every transaction would run the server out of
# connections ("sorry, too many clients already"). With the slot marks they record and
# leave: no connection may be refused, and every id stays distinct.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=storm$version port=$((port_base + 20)) clients=32 seconds=5

start "$name" "$port" shared_preload_libraries=snowflake_pg restart_after_crash=on
sql "$name" "CREATE EXTENSION snowflake_pg; $minted_table"
script=$CLUSTERS_DIR/$name/insert.sql
echo "INSERT INTO minted DEFAULT VALUES;" >"$script"

storm() { # LABEL: $clients clients, a new connection for every transaction, at once
  local result tps transactions failed lead
  # How far ahead of the clock the first id of the storm is: the start mark's lead.
  lead=$(sql "$name" "SELECT ceil(extract(epoch FROM (snowflake_parse(snowflake_next())).ts
    - clock_timestamp()) * 1000)::bigint")
  result=$(pgbench_run "$name" -c "$clients" -j 2 -C -T "$seconds" -f "$script") ||
    fail "$1: pgbench failed (a connection refused?)"
  read -r tps transactions failed <<<"$result"
  ((failed == 0)) || fail "$1: $failed transactions failed"
  figure "$1: the first id $lead ms ahead of the clock; $clients clients reconnecting for" \
    "every transaction, $transactions connections in $seconds s (${tps%.*} per second), none refused"
}

storm "right after a start"
cluster_stop "$name"
cluster_launch "$name" "$port" log_error_verbosity=verbose shared_preload_libraries=snowflake_pg restart_after_crash=on
storm "right after a clean restart"
sql "$name" "DO \$\$ BEGIN EXECUTE format('COPY (SELECT) TO PROGRAM %L',
  'kill -9 ' || pg_backend_pid()); END \$\$" >/dev/null 2>&1 && fail "the backend survived SIGKILL"
until sql "$name" "SELECT" >/dev/null 2>&1; do sleep 0.01; done
grep -q "terminated by signal 9" "$CLUSTERS_DIR/$name/server.log" || fail "no crash restart happened"
storm "right after a crash restart"
rows=$(check_distinct "$name" minted)
check_log "$name"
figure "$rows ids over the three storms, 0 duplicates"
