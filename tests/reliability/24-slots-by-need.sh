#!/usr/bin/env bash
# Slots by need, on servers that preload the library: a backend takes a free minting slot
# at its first id and gives it back at exit, so the layout needs a slot per backend
# minting at once, not per process the server could have.
# - max_connections = 400 and the default layout (256 slots): 200 clients inserting at
#   once all succeed; then 300: the 44 beyond the slots get the clean error (53300) and
#   nothing else fails; 150 clients holding their slots while 30 reconnect for every
#   transaction; never a duplicate; snowflake_status counts the slots.
# - a layout of one slot: a second backend is refused while the first holds it; the slot
#   given back by a backend that ran ahead of the clock is taken at once by another, whose
#   ids lie above; a crash with the slot held, then a restart, and minting goes on above
#   every id before.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=slots$version
start "$name" $((port_base + 52)) shared_preload_libraries=snowflake_pg max_connections=400
sql "$name" "CREATE EXTENSION snowflake_pg; $minted_table"
script=$CLUSTERS_DIR/$name/insert.sql
echo "INSERT INTO minted DEFAULT VALUES;" >"$script"
slot_of="(snowflake_parse(id)).backend_slot"

# 200 clients at once, each holding a slot for the whole run.
result=$(pgbench_run "$name" -c 200 -j 2 -T 5 -f "$script") || fail "200 clients: pgbench failed"
read -r _ transactions failed <<<"$result"
((failed == 0)) || fail "200 clients: $failed transactions failed"
slots_used=$(sql "$name" "SELECT count(DISTINCT $slot_of) FROM minted")
((slots_used == 200)) || fail "200 clients minted from $slots_used slots"
rows=$(check_distinct "$name" minted)
figure "max_connections = 400, default layout: 200 clients at once, $transactions inserts, 0 failed, 200 slots used, $rows ids, 0 duplicates"

# 300 clients: pgbench connects them all, then each mints; those past the 256 slots are
# refused and abort, the others hold their slots to the end.
sql "$name" "TRUNCATE minted"
log=$CLUSTERS_DIR/$name/pgbench-300.log
PGBENCH_LOG=$log pgbench_run "$name" --aborts -c 300 -j 2 -T 5 -f "$script" >/dev/null ||
  fail "pgbench failed otherwise than by clients refused a slot"
aborted=$(grep -c 'aborted in command' "$log" || true)
refused=$(grep -c 'no minting slot is free: all 256 slots that snowflake.node_bits = 2 leaves room for are held' "$log" || true)
((aborted == 44)) || fail "300 clients: $aborted aborted, not 44: $(grep -m3 aborted "$log")"
((refused == 44)) || fail "300 clients: $refused of the 44 aborted clients got the slots error: $(grep -m3 aborted "$log")"
slots_used=$(sql "$name" "SELECT count(DISTINCT $slot_of) FROM minted")
((slots_used == 256)) || fail "300 clients minted from $slots_used slots, not 256"
rows=$(check_distinct "$name" minted)
quiesce "$name"
status=$(sql "$name" "SELECT concat_ws(' ', slots, backends_minting, most_backends_minting) FROM snowflake_status")
[[ $status == "256 0 256" ]] || fail "snowflake_status after the clients left: $status, not '256 0 256'"
figure "300 clients at once: 256 held a slot to the end ($rows ids, 0 duplicates), 44 refused with 53300 naming the 256 slots, nothing else failed; snowflake_status: slots 256, backends_minting 0, most_backends_minting 256"

# 150 clients holding their slots while 30 reconnect for every transaction.
sql "$name" "TRUNCATE minted"
pgbench_run "$name" -c 150 -j 1 -T 6 -f "$script" >"$CLUSTERS_DIR/$name/holders.out" &
holders=$!
sleep 1
result=$(pgbench_run "$name" -c 30 -j 1 -C -T 4 -f "$script") || fail "reconnecting clients: pgbench failed"
read -r _ reconnections failed <<<"$result"
((failed == 0)) || fail "reconnecting clients: $failed transactions failed"
wait "$holders" || fail "the 150 clients holding slots failed"
read -r _ held_transactions failed <"$CLUSTERS_DIR/$name/holders.out"
((failed == 0)) || fail "the 150 clients holding slots: $failed transactions failed"
rows=$(check_distinct "$name" minted)
figure "150 clients holding slots ($held_transactions inserts) while 30 reconnected for each of $reconnections transactions: 0 failed, $rows ids, 0 duplicates"
check_log "$name"
cluster_stop "$name"

# One slot: 'time:41, node:14, sequence:8' has no slot bits.
one=oneslot$version
start "$one" $((port_base + 53)) shared_preload_libraries=snowflake_pg restart_after_crash=on \
  "snowflake.layout='time:41, node:14, sequence:8'"
sql "$one" "CREATE EXTENSION snowflake_pg; CREATE TABLE ids (id bigint PRIMARY KEY, who text)"
holder_pid=$CLUSTERS_DIR/$one/holder.pid
cluster_psql "$one" -qAt -c "INSERT INTO ids SELECT snowflake_next(), 'holder'" \
  -c "SELECT pg_backend_pid()" -c "SELECT pg_sleep(60)" >"$holder_pid" 2>/dev/null &
until [[ -s $holder_pid ]]; do sleep 0.05; done
expect_error "$one" "SELECT snowflake_next()" \
  "53300: no minting slot is free: all 1 slots of the 0 slot bits of snowflake.layout are held.*DETAIL: +A backend holds a minting slot from its first id until it exits; 1 of 1 are held now"

# A crash with every slot held, then a restart: the new life starts above every id.
before=$(sql "$one" "SELECT max(id) FROM ids")
kill -9 "$(head -1 "$holder_pid")"
wait || true
until sql "$one" "SELECT" >/dev/null 2>&1; do sleep 0.05; done
grep -q "terminated by signal 9" "$CLUSTERS_DIR/$one/server.log" || fail "no crash restart happened"
sql "$one" "INSERT INTO ids SELECT snowflake_next(), 'after the crash'"
slot_free() { until [[ $(sql "$one" "SELECT backends_minting FROM snowflake_status") == 0 ]]; do sleep 0.01; done; }
[[ $(sql "$one" "SELECT min(id) FILTER (WHERE who = 'after the crash') > $before FROM ids") == t ]] ||
  fail "after the crash restart, an id at or below $before"

# A burst runs ahead of the clock (256 ids per ms), gives the slot back at exit, and the
# next backend takes it at once: its first id lies above the burst's last.
slot_free
burst=$(sql "$one" "SELECT max(id), (extract(epoch FROM (snowflake_parse(max(id))).ts - clock_timestamp()) * 1000)::int
  FROM (SELECT snowflake_next() AS id FROM generate_series(1, 400000)) s")
IFS='|' read -r last lead <<<"$burst"
((lead > 100)) || fail "the burst ended only $lead ms ahead of the clock"
slot_free
next=$(sql "$one" "SELECT snowflake_next()")
((next > last)) || fail "the next holder of the slot minted $next, not above the burst's last id $last"
gap=$(sql "$one" "SELECT ((extract(epoch FROM (snowflake_parse($next)).ts - (snowflake_parse($last)).ts)) * 1000)::int")
figure "one slot: a second backend refused (53300) while the first held it; a crash with the slot held, then a restart: ids above every earlier one; a burst ended $lead ms ahead of the clock and gave the slot back, the next backend's first id came $gap ms after its last"
check_log "$one"
