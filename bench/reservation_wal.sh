#!/usr/bin/env bash
# What the reservation's WAL records cost (docs/performance.md, "Failover"): the WAL they
# add, idle and under the insert benchmark's load, counted by pg_waldump --stats over the
# run; and the latency of a renewal with a synchronous standby (synchronous_commit on),
# seen as the slowest calls of one client calling snowflake_next() alone, against the same
# without a standby. A primary preloading the library, and its streaming standby.
# Usage: bash bench/reservation_wal.sh [15|18]   (15 by default; the report goes to
# bench/results/reservation-wal-pgV.txt). DURATION [10] sets each run's seconds.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

version=${1:-15}
DURATION=${DURATION:-10}
results=$SNOWFLAKE_PG_ROOT/bench/results/reservation-wal-pg$version.txt
primary=wal-primary$version standby=wal-standby$version
trap 'cluster_stop "$standby"; cluster_stop "$primary"' EXIT
cluster_init "$primary" "$version"
cluster_configure "$primary" shared_preload_libraries=snowflake_pg
cluster_launch "$primary" $((5870 + version % 10))
sql "$primary" "CREATE EXTENSION snowflake_pg;
  CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), payload int)"
dir=$(cluster_dir "$primary")
echo "INSERT INTO t (payload) SELECT 1 FROM generate_series(1, 10);" >"$dir/insert.sql"
echo "SELECT snowflake_next();" >"$dir/call.sql"

lsn() { sql "$primary" "SELECT pg_current_wal_lsn()"; }

# wal_between FROM TO: "RECORDS BYTES TOTAL_BYTES": the reservation records between two WAL
# positions of the primary, their bytes, and every record's bytes.
# (The stats lines hold percentages in () and []: left out, the counts and sizes remain.)
wal_between() {
  [[ $1 != "$2" ]] || { echo 0 0 0; return; }
  as_pg "$(pg_bin_of "$version")/pg_waldump" -p "$dir/data/pg_wal" -s "$1" -e "$2" --stats=record |
    sed -E 's/\([^)]*\)//g; s/\[[^]]*\]//g' |
    awk '/^custom173\// { n += $2; b += $3 } /^Total / { t = $3 } END { print n + 0, b + 0, t + 0 }'
}

# wal_during TEXT COMMAND...: runs COMMAND, then prints TEXT and the WAL it wrote.
wal_during() {
  local text=$1 from records bytes total; shift
  from=$(lsn)
  "$@" >/dev/null
  read -r records bytes total <<<"$(wal_between "$from" "$(lsn)")"
  echo "$text: $records reservation records, $bytes bytes ($((bytes / DURATION)) bytes/s);" \
    "all WAL $total bytes ($((total / DURATION)) bytes/s)"
}

# slowest CLIENT_LOG K: the median of the K slowest latencies (µs) of a pgbench log.
slowest() { awk '{ print $3 }' "$1" | sort -n | tail -n "$2" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# calls TEXT: one client calling snowflake_next() for DURATION s, its per-call latencies
# logged; prints the calls, the median call, the renewals (records written meanwhile) and
# the median of as many slowest calls: what a renewal costs the call that makes it.
calls() {
  local text=$1 from log renewals
  rm -f "$dir"/calls.*
  from=$(lsn)
  (cd "$dir" && pgbench_run "$primary" -M prepared -c 1 -T "$DURATION" -f "$dir/call.sql" -l --log-prefix=calls) >/dev/null
  log=$(ls "$dir"/calls.*)
  read -r renewals _ _ <<<"$(wal_between "$from" "$(lsn)")"
  echo "$text: $(wc -l <"$log") calls, median $(awk '{ print $3 }' "$log" | sort -n |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }') µs; $renewals renewals, the" \
    "$renewals slowest calls' median $(slowest "$log" "$renewals") µs"
}

{
  echo "# reservation WAL, PostgreSQL $version, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $DURATION s runs"
  echo "# command: bash bench/reservation_wal.sh $version"
  wal_during "idle, 2 sessions connected" \
    pgbench_run "$primary" -c 2 -T "$DURATION" -f <(echo "SELECT pg_sleep(0.1);")
  wal_during "insert benchmark (2 clients, 10 rows a transaction)" \
    pgbench_run "$primary" -M prepared -c 2 -j 2 -T "$DURATION" -f "$dir/insert.sql"
  calls "no standby"
  cluster_standby "$primary" "$standby" $((5860 + version % 10))
  sql "$primary" "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" >/dev/null
  until [[ $(sql "$primary" "SELECT string_agg(sync_state, ',') FROM pg_stat_replication") == sync ]]; do sleep 0.1; done
  calls "a synchronous standby (synchronous_commit on)"
} | tee "$results"
