#!/usr/bin/env bash
# Bursts past 4,096 ids per ms in one backend: millions of ids in one statement borrow
# later milliseconds, all distinct, never further ahead of the clock than
# snowflake.max_lead_ms (the default 1 s, then 50 ms after a reload). Then the hand-over
# after a burst: the backend holds its slot until the clock has caught up with its last
# id, and the next holder of the slot starts after it.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=burst$version port=$((port_base + 12)) ids=${BURST_IDS:-3000000}
# Emulated, a backend mints some 150 ids a ms, far from the 4,096 of the default layout: its
# bursts never run ahead, and 3,000,000 ids take 20 s each. 500,000 keep the volume's checks;
# the run on a layout of 64 ids a ms (tests/run.sh) makes the bursts run ahead.
if $emulated && [[ -z ${BURST_IDS:-} ]]; then ids=500000; fi

start "$name" "$port"
sql "$name" "CREATE EXTENSION snowflake_pg"

burst() { # LEAD_BOUND_MS: one statement of $ids ids, the lead sampled every 1,000 ids
  local bound=$1 rows distinct lead ms
  IFS='|' read -r rows distinct lead ms <<<"$(sql "$name" "SELECT count(*),
    count(DISTINCT id), max(lead), round(extract(epoch FROM max(sampled) - statement_timestamp()) * 1000)
    FROM (SELECT id, CASE WHEN g % 1000 = 0 THEN clock_timestamp() END AS sampled,
      CASE WHEN g % 1000 = 0
        THEN ceil(extract(epoch FROM (snowflake_parse(id)).ts - clock_timestamp()) * 1000)::bigint END AS lead
      FROM (SELECT g, snowflake_next() AS id FROM generate_series(1, $ids) g OFFSET 0) s) t")"
  ((rows == ids && distinct == ids)) || fail "$distinct distinct ids of $rows in one burst"
  ((lead <= bound)) || fail "the burst ran $lead ms ahead of the clock, past $bound ms"
  figure "one backend, max_lead_ms = $bound: $ids ids in $ms ms ($((ids * 1000 / ms)) ids/s)," \
    "all distinct, at most $lead ms ahead of the clock"
}
burst 1000
reload_setting "$name" snowflake.max_lead_ms 50
# With preload, a backend leaves its slot at once and the next holder starts after the
# slot's mark, up to 1 s ahead after the burst above: a lowered bound holds (a first call
# further ahead is refused) once the clock has caught up.
if [[ $(sql "$name" "SHOW shared_preload_libraries") == *snowflake_pg* ]]; then sleep 1; fi
burst 50
reload_setting "$name" snowflake.max_lead_ms default

# Hand-over: A bursts and disconnects; a watcher notes when A's process is gone; then B
# takes the slot A freed. Times are in ms since 1970: of an id, its ts; of the clock,
# clock_timestamp() truncated to the ms.
IFS='|' read -r pid_a last_a slot_a lead_a <<<"$(sql "$name" "SELECT pg_backend_pid(),
  (extract(epoch FROM p.ts) * 1000)::bigint, p.backend_slot,
  ceil(extract(epoch FROM p.ts - clock_timestamp()) * 1000)::bigint
  FROM (SELECT max(snowflake_next()) AS last FROM generate_series(1, $ids)) s, snowflake_parse(s.last) p")"
gone_ms=$(sql "$name" "DO \$\$ BEGIN
    WHILE EXISTS (SELECT FROM pg_stat_activity WHERE pid = $pid_a) LOOP
      PERFORM pg_sleep(0.001); PERFORM pg_stat_clear_snapshot();
    END LOOP; END \$\$" -c "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint")
IFS='|' read -r first_b slot_b <<<"$(in_slot "$name" "$slot_a" "SELECT (extract(epoch FROM p.ts) * 1000)::bigint,
  p.backend_slot FROM snowflake_parse(snowflake_next()) AS p;")"
[[ $slot_b == "$slot_a" ]] || fail "B got slot $slot_b, not A's slot $slot_a"
((first_b > last_a)) || fail "B's first id (ms $first_b) is not after A's last (ms $last_a)"
# Without preload A holds its slot until the clock reaches its last id; with preload it
# leaves at once, its last tick recorded in the slot's mark for B to start after.
if [[ $(sql "$name" "SHOW shared_preload_libraries") == *snowflake_pg* ]]; then
  ((gone_ms < last_a)) || fail "A, preloaded, waited at exit until ms $gone_ms for its last id's ms $last_a"
  how="left slot $slot_a $((last_a - gone_ms)) ms before its last id's ms (slot mark)"
else
  ((gone_ms >= last_a)) || fail "A left its slot at ms $gone_ms, before its last id's ms $last_a"
  how="left slot $slot_a $((gone_ms - last_a)) ms after its last id's ms"
fi
check_log "$name"
figure "hand-over after a burst: A ended $lead_a ms ahead of the clock and $how;" \
  "B's first id in that slot came $((first_b - last_a)) ms after A's last"
