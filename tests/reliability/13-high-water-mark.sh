#!/usr/bin/env bash
# The durable high-water mark, with preload: after a clean restart with the clock set back
# 10 s and 10 min, after a kill -9 of the postmaster right after a burst ran ahead, and
# while the file of the mark cannot be written (a read-only directory, a full file
# system), no id repeats and no id is below one minted earlier; a file that holds no mark
# keeps the server from starting. A clock behind the mark
# by more than snowflake.max_lead_ms gets a clean error naming the gap and the mark.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
preload=(shared_preload_libraries=snowflake_pg autovacuum=off log_error_verbosity=verbose)
# The error of a clock behind the mark, as psql prints it verbosely.
behind='ERROR:  55000: the system clock is ([0-9]+) ms behind the last snowflake id of this backend slot \(([^)]*)\)'

# last_n NAME: the insertion number (minted.n) of the last row so far.
last_n() { sql "$1" "SELECT coalesce(max(n), 0) FROM minted"; }

# minted_after NAME LAST_N: every id in minted is distinct, and the rows inserted after
# row LAST_N (by minted.n, a sequence) all hold ids above every id of the rows up to it.
# Only across a restart can this be asked: within a server life a backend that ran ahead
# of the clock holds ids above those a new backend mints after it.
minted_after() {
  local rows below
  rows=$(check_distinct "$1" minted)
  below=$(sql "$1" "SELECT count(*) FROM minted WHERE n > $2
    AND id <= (SELECT max(id) FROM minted WHERE n <= $2)")
  [[ $below == 0 ]] || fail "$1: $below ids minted after the restart are not above every id minted before"
}

# --- A clean restart with the clock set back -------------------------------------------
set_back() { # SECONDS: mint, stop cleanly, start with the clock SECONDS behind
  local seconds=$1 name=hwm-back$version port=$((port_base + 21)) before out gap mark minted_ms since
  start_faked "$name" "$port" "${preload[@]:0:1}"
  sql "$name" "CREATE EXTENSION snowflake_pg; $minted_table"
  # Every id below is minted at or after minted_ms, on the real clock.
  minted_ms=$(date +%s%3N)
  sql "$name" "INSERT INTO minted SELECT FROM generate_series(1, 100000)"
  before=$(last_n "$name")
  cluster_stop "$name"
  step "$name" "-$seconds"
  faked "$name" cluster_launch "$name" "$port" "${preload[@]}"
  # Every call while the clock is behind is refused, in a new session or an old one.
  out=$(cluster_psql "$name" -qAt -v ON_ERROR_STOP=0 -v VERBOSITY=verbose 2>&1 <<'SQL'
INSERT INTO minted DEFAULT VALUES;
INSERT INTO minted DEFAULT VALUES;
SQL
  )
  [[ $(grep -cE "$behind" <<<"$out") == 2 ]] || fail "set back $seconds s: expected 2 clean refusals: $out"
  [[ $out =~ $behind ]] && gap=${BASH_REMATCH[1]} mark=${BASH_REMATCH[2]}
  # The set-back, less the time since the ids were minted (the stop and the start: some
  # seconds on an emulated server), plus up to the lead of the last ids (the mark is at most
  # max_lead_ms, 1 s, ahead of the clock).
  since=$(($(date +%s%3N) - minted_ms))
  ((gap >= seconds * 1000 - since && gap <= seconds * 1000 + 1000)) ||
    fail "set back $seconds s: a gap of $gap ms, $since ms after the ids were minted"
  [[ $(last_n "$name") == "$before" ]] || fail "set back $seconds s: an id was minted"
  # Back on time, ids go on above the old ones.
  step "$name" +0
  sql "$name" "INSERT INTO minted SELECT FROM generate_series(1, 10000)"
  minted_after "$name" "$before"
  check_log "$name"
  cluster_stop "$name"
  figure "clean restart with the clock set back $seconds s: refused with 55000, the clock $gap ms" \
    "behind the mark ($mark); back on time, 10000 more ids, all above the $before before"
}
set_back 10
set_back 600

# --- kill -9 of the postmaster right after a burst ran ahead ----------------------------
# 3,000,000 ids run ahead of the clock; an emulated backend mints some 150 ids a ms and
# never runs ahead on this layout: 500,000 there.
name=hwm-kill$version port=$((port_base + 22)) burst=3000000
if $emulated; then burst=500000; fi
start "$name" "$port" "${preload[@]}"
sql "$name" "CREATE EXTENSION snowflake_pg; $minted_table"
lead=$(sql "$name" "WITH burst AS (INSERT INTO minted (id) SELECT id FROM (SELECT snowflake_next() AS id
    FROM generate_series(1, $burst)) s ORDER BY id DESC LIMIT 1000 RETURNING id)
  SELECT ceil(extract(epoch FROM (snowflake_parse(max(id))).ts - clock_timestamp()) * 1000)::bigint FROM burst")
before=$(last_n "$name")
postmaster=$(head -1 "$CLUSTERS_DIR/$name/data/postmaster.pid")
kill -9 "$postmaster"
killed_at=$SECONDS
# Its backends end when they notice; until then the old shared memory is in use.
until cluster_launch "$name" "$port" "${preload[@]}" >/dev/null 2>&1; do
  ((SECONDS - killed_at < 30)) || fail "the server did not start again after its postmaster was killed"
  sleep 0.2
done
sql "$name" "INSERT INTO minted SELECT FROM generate_series(1, 100000)"
minted_after "$name" "$before"
check_log "$name"
figure "kill -9 of the postmaster right after a burst ended $lead ms ahead of the clock: restarted" \
  "in $((SECONDS - killed_at)) s, 100000 ids after, all above the $before before; 0 duplicates"

# --- The mark cannot be written --------------------------------------------------------
marks=$CLUSTERS_DIR/$name/data/pg_snowflake
# unwritable HOW UNDO REASON: with the directory of the mark made unwritable by the command
# HOW, no id is minted once the reservation is used up, with a clean error saying REASON;
# once UNDO has made it writable again, ids are minted again, all distinct. Every call is a
# new backend, like a pool's fresh connection. Sets minted and refused: the calls of each
# kind.
unwritable() {
  local how=$1 undo=$2 before out
  minted=0 refused=0
  before=$(sql "$name" "SELECT count(*) FROM minted")
  eval "$how"
  for _ in $(seq 30); do # 3 s: the reservation reaches 1 s ahead at most
    if out=$(sql "$name" "INSERT INTO minted DEFAULT VALUES" -v VERBOSITY=verbose 2>&1); then
      minted=$((minted + 1))
    else
      grep -qE "ERROR:  58030: could not move the snowflake_pg high-water mark ahead in \"pg_snowflake/high_water_mark\": $3" <<<"$out" ||
        { eval "$undo"; fail "$how: unexpected error: $out"; }
      refused=$((refused + 1))
    fi
    sleep 0.1
  done
  eval "$undo"
  ((refused > 0)) || fail "$how: no call was refused in 3 s"
  [[ $out == *ERROR* ]] || fail "$how: the last call, 3 s on, was not refused"
  [[ $(sql "$name" "SELECT count(*) FROM minted") == $((before + minted)) ]] ||
    fail "$how: a refused call left a row"
  sql "$name" "INSERT INTO minted SELECT FROM generate_series(1, 1000)"
  local rows
  rows=$(check_distinct "$name" minted)
}
unwritable "chmod 500 $marks" "chmod 700 $marks" 'Permission denied'

figure "mark directory read-only: $minted calls minted within the reservation, then $refused" \
  "refused (58030, Permission denied); writable again, ids are minted again; 0 duplicates"
# A full file system: a small one over the directory, filled up.
cp -a "$marks" "$marks.saved"
if mount -t tmpfs -o "size=16k,mode=700,uid=$(id -u postgres),gid=$(id -g postgres)" tmpfs "$marks" 2>/dev/null; then
  cp -a "$marks.saved/." "$marks/"
  unwritable "dd if=/dev/zero of=$marks/filler bs=1k 2>/dev/null || true" "rm -f $marks/filler" \
    'No space left on device'
  cp -a "$marks/." "$marks.saved/" && umount "$marks" && cp -a "$marks.saved/." "$marks/"
  figure "mark file system full: $minted calls minted within the reservation, then $refused" \
    "refused (58030, No space left on device); with room again, ids are minted again; 0 duplicates"
else
  figure "mark file system full: SKIPPED, this machine does not let the test mount a small file system"
fi
rm -rf "$marks.saved"

# --- A mark file that does not hold a mark: the server does not start ---------------------
cluster_stop "$name"
cp -p "$marks/high_water_mark" "$marks/high_water_mark.saved"
echo "not a time" >"$marks/high_water_mark"
cluster_launch "$name" "$port" "${preload[@]}" >/dev/null 2>&1 && fail "the server started with a corrupt mark file"
grep -q 'could not read the snowflake_pg high-water mark from "pg_snowflake/high_water_mark": it does not hold one time' \
  "$CLUSTERS_DIR/$name/server.log" || fail "the log does not say why the server did not start"
mv -f "$marks/high_water_mark.saved" "$marks/high_water_mark"
cluster_launch "$name" "$port" "${preload[@]}"
sql "$name" "INSERT INTO minted SELECT FROM generate_series(1, 1000)"
figure "a mark file that holds no time: the server does not start, and its log says why;" \
  "restored, it starts and mints"
check_log "$name"
