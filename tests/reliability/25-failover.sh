#!/usr/bin/env bash
# Failover: a primary preloading the library and its streaming standbys, configured alike
# as an HA manager sets them up (the same postgresql.conf, one node id), the standbys'
# clocks behind the primary's. The primary hands out ids (inserts, read-only selects whose
# ids the client keeps, bursts that run ahead of its clock), is killed with kill -9, and a
# standby is promoted. No id minted after a promotion may be at or below any id handed out
# before it, and no insert may fail but for the documented refusal of a clock behind the
# last reservation by more than what is waited out (55000, naming the gap).
# Cases: asynchronous and synchronous standbys; clocks behind by less and by more than the
# lead bound, and by more than is waited out; a standby restarted before its promotion; a
# cascading standby promoted; the old primary rewound (pg_rewind) and rejoining as a
# standby, then a switchover back. Last, a standby that does not preload the library: it
# stops at the first reservation it meets, with a log line that names the fix.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# What every member's postgresql.conf holds: wal_log_hints, and WAL kept since the last
# common checkpoint, for pg_rewind; autovacuum off so that its workers take no backend slot
# between the scenario's own sessions.
member_conf=(shared_preload_libraries=snowflake_pg wal_log_hints=on wal_keep_size=1GB autovacuum=off)
port=$((port_base + 28))
next_port() { port=$((port + 1)); }

# primary NAME [setting=value ...]: a fresh primary on the next port, its clock faked at real
# time, with the table.
primary() {
  local name=$1; shift
  servers+=("$name")
  rm -f "$CLUSTERS_DIR/$name.offset"
  cluster_init "$name" "$version"
  cluster_configure "$name" "${member_conf[@]}" "$@"
  faked "$name" cluster_launch "$name" "$port"
  next_port
  sql "$name" "CREATE EXTENSION snowflake_pg; $minted_table"
}

# standby NAME UPSTREAM OFFSET [setting=value ...]: a streaming standby of UPSTREAM from a
# base backup (which copies its postgresql.conf), on the next port, its clock OFFSET
# seconds off real time.
standby() {
  local name=$1 upstream=$2 offset=$3; shift 3
  servers+=("$name")
  step "$name" "$offset"
  faked "$name" cluster_standby "$upstream" "$name" "$port" "$@"
  next_port
}

# hand_out NAME KIND: in the background until the server goes away, a client of NAME that
# keeps every id it is handed in $CLUSTERS_DIR/NAME/handed.KIND: inserts (RETURNING), a
# read-only transaction's selects, or bursts that run ahead of the clock (their last id).
hand_out() {
  local name=$1 kind=$2 statement
  case $kind in
    insert) statement="INSERT INTO minted SELECT FROM generate_series(1, 100) RETURNING id;" ;;
    select) statement="BEGIN READ ONLY; SELECT snowflake_next() FROM generate_series(1, 100); COMMIT;" ;;
    burst) statement="SELECT max(snowflake_next()) FROM generate_series(1, 3000000);" ;;
  esac
  yes "$statement" 2>/dev/null | head -n 100000 >"$CLUSTERS_DIR/$name/$kind.sql" || true
  cluster_psql "$name" -qAt -f "$CLUSTERS_DIR/$name/$kind.sql" \
    >"$CLUSTERS_DIR/$name/handed.$kind" 2>/dev/null &
}

# crash NAME: kill -9 of the postmaster and every process of server NAME at once, as when
# its machine is lost; then the clients that were handed ids end.
crash() {
  local postmaster
  postmaster=$(head -1 "$CLUSTERS_DIR/$1/data/postmaster.pid")
  # shellcheck disable=SC2046 # the children's pids, one word each
  kill -9 "$postmaster" $(pgrep -P "$postmaster") 2>/dev/null || true
  while kill -0 "$postmaster" 2>/dev/null; do sleep 0.05; done
  wait
}

# handed_max OLD OTHER: the greatest id server OLD handed out, to its clients (their files)
# or into a row (which running server OTHER holds, replicated).
handed_max() {
  { cat "$CLUSTERS_DIR/$1"/handed.* 2>/dev/null; sql "$2" "SELECT coalesce(max(id), 0) FROM minted"; } |
    grep -E '^[0-9]+$' | sort -n | tail -n 1
}

promote() { as_pg "$(pg_bin_of "$version")/pg_ctl" -D "$CLUSTERS_DIR/$1/data" -w promote >/dev/null; }

ms_since() { echo $(((${EPOCHREALTIME/./} - $1) / 1000)); }

# mints_above NAME OLD_MAX LABEL: promoted server NAME mints: its first call (timed), then 4
# clients inserting for 2 s into the table that holds the replicated rows. Every id is above
# OLD_MAX and no insert fails. Sets first_ms, rows_after.
mints_above() {
  local name=$1 old_max=$2 label=$3 started first n_before result failed
  n_before=$(sql "$name" "SELECT coalesce(max(n), 0) FROM minted")
  started=${EPOCHREALTIME/./}
  first=$(sql "$name" "SELECT snowflake_next()")
  first_ms=$(ms_since "$started")
  ((first > old_max)) || fail "$label: the first id after promotion, $first, is not above $old_max"
  echo "INSERT INTO minted SELECT FROM generate_series(1, 100);" >"$CLUSTERS_DIR/$name/after.sql"
  result=$(pgbench_run "$name" -c 4 -j 2 -T 2 -f "$CLUSTERS_DIR/$name/after.sql")
  failed=${result##* }
  ((failed == 0)) || fail "$label: $failed inserts failed after promotion"
  rows_after=$(sql "$name" "SELECT count(*) FROM minted WHERE n > $n_before")
  ((rows_after > 0)) || fail "$label: nothing inserted after promotion"
  local below
  below=$(sql "$name" "SELECT count(*) FROM minted WHERE n > $n_before AND id <= $old_max")
  ((below == 0)) || fail "$label: $below ids minted after promotion are not above $old_max"
  check_distinct "$name" minted >/dev/null
}

# synchronous NAME: the one standby of NAME is synchronous.
synchronous() { [[ $(sql "$1" "SELECT string_agg(sync_state, ',') FROM pg_stat_replication") == sync ]]; }

# replayed_to NAME LSN: standby NAME has replayed the WAL up to LSN.
replayed_to() { [[ $(sql "$1" "SELECT pg_last_wal_replay_lsn() >= '$2'") == t ]]; }

# failover LABEL OFFSET KINDS [sync]: a primary handing out ids of KINDS (a comma list) and
# an asynchronous (or synchronous) standby OFFSET seconds behind; kill -9 of the primary
# after 2 s, promotion, minting above.
failover() {
  local label=$1 offset=$2 kinds=$3 mode=${4:-async}
  local old=fo$version-$label new=fo$version-$label-standby kind old_max
  primary "$old"
  standby "$new" "$old" "$offset"
  if [[ $mode == sync ]]; then
    sql "$old" "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" >/dev/null
    eventually "the standby of $label did not become synchronous" synchronous "$old"
  fi
  for kind in ${kinds//,/ }; do hand_out "$old" "$kind"; done
  sleep 2
  crash "$old"
  old_max=$(handed_max "$old" "$new")
  promote "$new"
  mints_above "$new" "$old_max" "$label"
  check_log "$new"
  figure "$label: standby clock ${offset} s, the primary handed out ${kinds//,/, } then was killed;" \
    "promoted, first id in $first_ms ms, $rows_after rows by 4 clients, all above the old primary's, 0 failed"
}

# --- Asynchronous standbys, clocks behind by less and by more than the lead bound --------
failover async-0.5s -0.5 insert,select,burst
failover async-2s -2 insert,select,burst

# --- A synchronous standby: every reservation waits for its flush there ------------------
failover sync-2s -2 insert,select sync

# --- A clock further behind than is waited out: refused, then minting once it is right ---
old=fo$version-far new=fo$version-far-standby
primary "$old"
standby "$new" "$old" -10
hand_out "$old" insert
sleep 2
crash "$old"
old_max=$(handed_max "$old" "$new")
promote "$new"
out=$(sql "$new" "SELECT snowflake_next()" -v VERBOSITY=verbose 2>&1) &&
  fail "a clock 10 s behind minted $out after promotion"
[[ $out =~ 55000:\ the\ system\ clock\ is\ ([0-9]+)\ ms\ behind ]] ||
  fail "a clock 10 s behind: expected the 55000 refusal, got: $out"
gap=${BASH_REMATCH[1]}
step "$new" +0
mints_above "$new" "$old_max" far
check_log "$new"
figure "clock 10 s behind: refused after promotion with 55000 (the clock $gap ms behind);" \
  "once the clock is right, $rows_after rows, all above the old primary's, 0 failed"

# --- A standby restarted before its promotion keeps the reservation from its mark file ---
old=fo$version-restart new=fo$version-restart-standby
primary "$old"
standby "$new" "$old" -2
restart_port=$((port - 1))
hand_out "$old" insert
hand_out "$old" burst
sleep 2
crash "$old"
old_max=$(handed_max "$old" "$new")
cluster_stop "$new"
faked "$new" cluster_launch "$new" "$restart_port"
promote "$new"
mints_above "$new" "$old_max" restart
check_log "$new"
figure "standby restarted before its promotion (clock -2 s): first id in $first_ms ms," \
  "$rows_after rows, all above the old primary's, 0 failed"

# --- A cascading standby promoted ----------------------------------------------------------
old=fo$version-cascade middle=fo$version-cascade-middle new=fo$version-cascade-standby
primary "$old"
standby "$middle" "$old" +0
standby "$new" "$middle" -2
hand_out "$old" insert
hand_out "$old" select
sleep 2
crash "$old"
old_max=$(handed_max "$old" "$new")
promote "$new"
mints_above "$new" "$old_max" cascade
check_log "$new"
figure "cascading standby (clock -2 s) promoted: first id in $first_ms ms, $rows_after rows," \
  "all above the old primary's, 0 failed"

# --- The old primary of async-2s, rewound, rejoins as a standby; then a switchover back ---
old=fo$version-async-2s new=fo$version-async-2s-standby
old_port=$(cluster_port "$old")
# The promotion's new timeline reaches the control file, which pg_rewind reads, at a checkpoint.
sql "$new" "CHECKPOINT"
as_pg "$(pg_bin_of "$version")/pg_rewind" -D "$CLUSTERS_DIR/$old/data" -R \
  --source-server="$(cluster_conninfo "$new")" >"$CLUSTERS_DIR/$old/rewind.log" 2>&1 ||
  { cat "$CLUSTERS_DIR/$old/rewind.log"; fail "pg_rewind of the old primary failed"; }
faked "$old" cluster_launch "$old" "$old_port"
hand_out "$new" select
sql "$new" "INSERT INTO minted SELECT FROM generate_series(1, 10000)"
lsn=$(sql "$new" "SELECT pg_current_wal_lsn()")
eventually "the rewound primary did not catch up" replayed_to "$old" "$lsn"
cluster_stop "$new"
wait
old_max=$(handed_max "$new" "$old")
promote "$old"
mints_above "$old" "$old_max" switchover
check_log "$old"
figure "the old primary rewound (pg_rewind) and rejoined as a standby; switchover back (clean" \
  "stop, promotion): first id in $first_ms ms, $rows_after rows, all above the other's, 0 failed"

# --- A standby that does not preload the library refuses to replay, loudly ---------------
old=fo$version-nopreload new=fo$version-nopreload-standby
primary "$old"
standby "$new" "$old" +0 "shared_preload_libraries=''"
sql "$old" "INSERT INTO minted SELECT FROM generate_series(1, 1000)"
log=$CLUSTERS_DIR/$new/server.log
eventually "the standby without the library did not stop at a reservation" \
  grep -q "resource manager with ID 173 not registered" "$log"
grep -q "HINT:  Include the extension module that implements this resource manager in shared_preload_libraries" "$log" ||
  fail "the standby's refusal does not name the fix: $(grep -A2 'ID 173' "$log")"
# PostgreSQL raises this one without an SQLSTATE of its own (XX000): kept apart from the
# logs that the run's final check reads for internal errors of the extension.
mv "$log" "$CLUSTERS_DIR/$new/refusal.log"
figure "a standby without the library stops at the first reservation: \"resource manager with" \
  "ID 173 not registered\", hinting at shared_preload_libraries"
