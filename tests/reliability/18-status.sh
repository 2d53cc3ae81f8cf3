#!/usr/bin/env bash
# snowflake_status under a faked clock (libfaketime under the postmaster, see common.sh).
# With preload the counters are the server's since its start: three live sessions that
# each meet a step back within snowflake.max_lead_ms count three absorbed steps and the
# lead they ran, each meeting one past it three refused; backends_minting counts the
# sessions holding a generator; the high-water mark lies ahead of the clock. Without
# preload each session sees only its own counters.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# A bound wide enough that a step back of 2 s is absorbed whatever the scheduling.
max_lead_ms=5000 sessions=3
# Offsets of the clock: ahead first, so that the slot marks of a first start (the clock
# plus the bound) lie behind it and no generator starts ahead; then 2 s back (within the
# bound) and 12 s back (past it).
ahead=+10 within=+8 past=-2

# counters NAME: backends minting, steps absorbed and refused, furthest lead, as "b a r l".
counters() {
  sql "$1" "SELECT concat_ws(' ', coalesce(backends_minting::text, '-'), clock_steps_absorbed,
    clock_steps_refused, furthest_lead_ms) FROM snowflake_status"
}

# all_at NAME STAGE: every session of NAME has passed STAGE.
all_at() { [[ $(find "$CLUSTERS_DIR/$1" -name "$2.*" | wc -l) == "$sessions" ]]; }

# --- With preload: the server's counters ------------------------------------------------
name=status$version-preload port=$((port_base + 44)) dir=$CLUSTERS_DIR/status$version-preload
start_faked "$name" "$port" shared_preload_libraries=snowflake_pg "snowflake.max_lead_ms=$max_lead_ms"
sql "$name" "CREATE EXTENSION snowflake_pg"
step "$name" "$ahead"
pids=()
for ((i = 1; i <= sessions; i++)); do
  # Each session mints, then at each stage mints once more and waits for the next: the
  # lead of its id after the step within the bound is measured against the clock.
  cluster_psql "$name" -qAt -v ON_ERROR_STOP=0 -v VERBOSITY=verbose >"$dir/session.$i.out" 2>&1 <<SQL &
SELECT snowflake_next() > 0;
\\! touch $dir/minted.$i; until [ -e $dir/go.within ]; do sleep 0.02; done
SELECT 'lead ' || floor(extract(epoch FROM (snowflake_parse(id)).ts - clock_timestamp()) * 1000)
  FROM (SELECT snowflake_next() AS id) s;
\\! touch $dir/within.$i; until [ -e $dir/go.past ]; do sleep 0.02; done
SELECT snowflake_next();
\\! touch $dir/past.$i; until [ -e $dir/go.end ]; do sleep 0.02; done
SQL
  pids+=($!)
done
eventually "the sessions did not mint" all_at "$name" minted
read -r minting absorbed refused lead_before <<<"$(counters "$name")"
[[ "$minting $absorbed $refused" == "$sessions 0 0" ]] ||
  fail "before any step: backends minting, absorbed, refused $minting $absorbed $refused"
[[ $(sql "$name" "SELECT high_water_mark > clock_timestamp() FROM snowflake_status") == t ]] ||
  fail "the high-water mark is not ahead of the clock: $(sql "$name" "SELECT high_water_mark, clock_timestamp() FROM snowflake_status")"

step "$name" "$within"
touch "$dir/go.within"
eventually "the sessions did not mint after the step within the bound" all_at "$name" within
measured=$(sed -n 's/^lead //p' "$dir"/session.*.out | sort -n | tail -1)
read -r minting absorbed refused lead <<<"$(counters "$name")"
((absorbed == sessions && refused == 0)) || fail "after a step within the bound: absorbed $absorbed, refused $refused"
((measured > lead_before && lead >= measured && lead <= max_lead_ms)) ||
  fail "furthest lead $lead ms (before the step $lead_before), ids measured $measured ms ahead"

step "$name" "$past"
touch "$dir/go.past"
eventually "the sessions did not call after the step past the bound" all_at "$name" past
read -r minting absorbed refused _ <<<"$(counters "$name")"
((minting == sessions && absorbed == sessions && refused == sessions)) ||
  fail "after a step past the bound: minting $minting, absorbed $absorbed, refused $refused"
step "$name" "$ahead"
touch "$dir/go.end"
for pid in "${pids[@]}"; do wait "$pid" || fail "a session failed"; done
for ((i = 1; i <= sessions; i++)); do
  grep -q '^ERROR:  55000: the system clock is [0-9]* ms behind the last snowflake id' "$dir/session.$i.out" ||
    fail "session $i was not refused past the bound: $(cat "$dir/session.$i.out")"
done
quiesce "$name"
read -r minting absorbed refused lead_after <<<"$(counters "$name")"
[[ "$minting $absorbed $refused $lead_after" == "0 $sessions $sessions $lead" ]] ||
  fail "once the sessions left: minting, absorbed, refused, lead $minting $absorbed $refused $lead_after"
waits=$(sql "$name" "SELECT spent_tick_waits FROM snowflake_status")
check_log "$name"
figure "preload, $sessions live sessions: backends_minting $sessions, high-water mark ahead of the" \
  "clock; each met a step back of 2 s (bound $max_lead_ms ms): clock_steps_absorbed $sessions," \
  "furthest_lead_ms $lead (ids measured up to $measured ms ahead); each met one of 12 s:" \
  "clock_steps_refused $sessions; once they left, backends_minting 0 and the counts kept" \
  "($waits spent-tick waits)"

# --- Without preload: each session's own -------------------------------------------------
name=status$version-stock port=$((port_base + 45)) offset=$CLUSTERS_DIR/status$version-stock.offset
start_faked "$name" "$port" "snowflake.max_lead_ms=$max_lead_ms"
sql "$name" "CREATE EXTENSION snowflake_pg"
out=$(cluster_psql "$name" -qAt -v ON_ERROR_STOP=0 -v VERBOSITY=verbose 2>&1 <<SQL
SELECT snowflake_next() > 0;
\\! echo -2 >$offset.new && mv -f $offset.new $offset
SELECT snowflake_next() > 0;
\\! echo -12 >$offset.new && mv -f $offset.new $offset
SELECT snowflake_next();
\\! echo +0 >$offset.new && mv -f $offset.new $offset
SELECT concat_ws(' ', preloaded, coalesce(backends_minting::text, '-'),
  coalesce(high_water_mark::text, '-'), clock_steps_absorbed, clock_steps_refused,
  furthest_lead_ms > 0) FROM snowflake_status;
SQL
)
[[ $out == *"ERROR:  55000: the system clock is "* ]] || fail "stock: the step past the bound was not refused: $out"
[[ $(tail -n 1 <<<"$out") == "f - - 1 1 t" ]] ||
  fail "stock: preloaded, backends minting, mark, absorbed, refused, lead: $(tail -n 1 <<<"$out")"
# A generator's first id falls after the tick it was made in: a lead of 1 ms at most.
own=$(sql "$name" "SELECT snowflake_next() > 0" -c "SELECT concat_ws(' ', clock_steps_absorbed,
  clock_steps_refused, furthest_lead_ms <= 1) FROM snowflake_status")
[[ $own == $'t\n0 0 t' ]] || fail "stock: a new session that minted once sees $own"
check_log "$name"
figure "without preload: a session that met a step back within the bound and one past it sees" \
  "1 absorbed and 1 refused (backends_minting and high_water_mark NULL); a new session" \
  "sees 0 and 0, and a lead of at most 1 ms (its first id)"
