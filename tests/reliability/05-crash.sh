#!/usr/bin/env bash
# Crash restart: a backend killed with SIGKILL makes the postmaster end every backend and
# restart. Ids minted after the restart must all be greater than every id committed
# before it, with no duplicate. On a stock server the killed backends mint plain inserts
# (no lead over the clock); with preload, the killed backend has just run a burst ahead of
# the clock, which only the slot marks can cover (see "What is not covered").
# Usage: 05-crash.sh 15|16|17|18|19 [stock|preload]   (both by default)
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
modes=("${@:2}")
((${#modes[@]})) || modes=(stock preload)
ms_now() { echo $(($(date +%s%N) / 1000000)); }
# The burst of the preloading server's victim: 3,000,000 ids run ahead of the clock. An
# emulated backend mints some 150 ids a ms and never runs ahead on this layout: 500,000.
burst=3000000
if $emulated; then burst=500000; fi

crash() { # crash MODE PORT
  local mode=$1 port=$2 name=crash$version-$1 settings=() victim
  [[ $mode == preload ]] && settings=(shared_preload_libraries=snowflake_pg)
  start "$name" "$port" restart_after_crash=on "${settings[@]}"
  sql "$name" "CREATE EXTENSION snowflake_pg; $minted_table"
  local script=$CLUSTERS_DIR/$name/insert.sql
  echo "INSERT INTO minted SELECT FROM generate_series(1, 100);" >"$script"

  # Before: 8 clients insert, one session idles, and one mints, commits and kills itself.
  pgbench_run "$name" -c 8 -j 2 -f "$script" -T 2 >/dev/null
  sql "$name" "SELECT pg_sleep(60)" >/dev/null 2>&1 &
  if [[ $mode == preload ]]; then # every 1,000th id of a burst that runs ahead of the clock
    victim="INSERT INTO minted (id) SELECT id FROM (SELECT g, snowflake_next() AS id
      FROM generate_series(1, $burst) g OFFSET 0) s WHERE g % 1000 = 0"
  else
    victim="INSERT INTO minted SELECT FROM generate_series(1, 100000)"
  fi
  local lead
  lead=$(sql "$name" "WITH victim AS ($victim RETURNING id)
    SELECT ceil(extract(epoch FROM (snowflake_parse(max(id))).ts - clock_timestamp()) * 1000)::bigint FROM victim")
  [[ -n $lead ]] || fail "$mode: the backend to be killed minted no id"
  local killed_at
  killed_at=$(ms_now)
  sql "$name" "DO \$\$ BEGIN EXECUTE format('COPY (SELECT) TO PROGRAM %L',
    'kill -9 ' || pg_backend_pid()); END \$\$" >/dev/null 2>&1 && fail "the backend survived SIGKILL"
  # A connection made before the postmaster has seen the crash succeeds, and the next one
  # finds the server in recovery: first its word in the log, then a connection.
  local i
  for ((i = 0; i < 1000; i++)); do
    grep -q "terminated by signal 9" "$CLUSTERS_DIR/$name/server.log" && break
    sleep 0.01
  done
  until sql "$name" "SELECT" >/dev/null 2>&1; do sleep 0.01; done
  local restart_ms=$(($(ms_now) - killed_at))
  wait || true # the idle session ended in the crash
  grep -q "terminated by signal 9" "$CLUSTERS_DIR/$name/server.log" || fail "no crash restart happened"

  # After: the same again on the restarted server, into the same table.
  local before old_max
  IFS='|' read -r before old_max <<<"$(sql "$name" "SELECT count(*), max(id) FROM minted")"
  sql "$name" "$victim"
  pgbench_run "$name" -c 8 -j 2 -f "$script" -T 3 >/dev/null
  local rows not_after
  rows=$(check_distinct "$name" minted)
  not_after=$(sql "$name" "SELECT count(*) FROM minted WHERE id <= $old_max")
  ((not_after == before)) ||
    fail "$mode: $((not_after - before)) ids minted after the restart are not after $old_max"
  check_log "$name"
  figure "$mode server: the crashed backend led the clock by $lead ms, the restart took" \
    "$restart_ms ms; $before ids before, $((rows - before)) after, all after the last one before; 0 duplicates"
}

offset=5
for mode in "${modes[@]}"; do
  crash "$mode" $((port_base + offset))
  offset=$((offset + 1))
done
