#!/usr/bin/env bash
# Instructions of one single-row insert, INSERT INTO t (payload) VALUES (1), for each key
# default of the SQL edition's insert benchmark (bench/sql_edition.sh), counted by
# callgrind in a single-user backend: each statement there is a transaction of its own,
# as each of pgbench's is, so every PL/pgSQL expression is set up again each time. The
# count of N inserts less the count of one, over N - 1: the first call's set-up (a slot
# taken) cancels out, after a first backend has done what a server does once. Timings
# move with the machine and with what else runs on it; instruction counts do not, so
# this is how the edition's common path is judged against the generators it replaces.
# The SQL edition on each path of its common case: the default layout, where under
# callgrind (some fifty times slower) every call finds a new millisecond and moves the
# slot's sequence to it (setval), and a layout of 1 s ticks, where the calls find the tick
# of the id before, each more than follow_clock's window of 32 µs after it, so that each
# takes the clock's pair (nextval, then setval). pgbench's one-row transactions take
# both: with 8 clients on 2 cores each session mints a few ids a millisecond. Each in
# both orders of the fields: the sequence right below the time (the default layout) and
# below the node and slot ('worker-first', 0.3.0's default, whose code is 0.3.0's);
# within a tick, the worker-first calls take the next number of the tick (nextval alone).
# Last, the layout of 1 s ticks with follow_clock off, whose calls take the next number
# too: what a call within the window costs with follow_clock on, where it runs the same
# statements, which differ in one operator.
# Usage: bash bench/sql_edition_profile.sh [15|18]   (15 by default; valgrind and the
# native extension installed). INSERTS [1001] sets N. Writes
# bench/results/sql-edition-instructions-pgV.txt.
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_valgrind
version=${1:-15} INSERTS=${INSERTS:-1001}
name=sqlprofile$version dir=$(cluster_dir "sqlprofile$version") bin=$(pg_bin_of "$version")
results=$BENCH_DIR/results/sql-edition-instructions-pg$version.txt
release=$SNOWFLAKE_PG_ROOT/target/sql-edition-bench
"$SNOWFLAKE_PG_ROOT/sql_edition/build.sh" "$release" >/dev/null
edition=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$SNOWFLAKE_PG_ROOT/sql_edition/snowflake_sql.control")

# The tables of bench/sql_edition.sh, and the SQL edition installed as a managed service's
# master user would (so its code runs as a role that is not a superuser, whose rights are
# checked), in database postgres on the default layout and in database second_ticks on
# a layout of 1 s ticks; in worker_first and second_ticks_worker_first, the same in the
# worker-first order (node ids of their own: a node id is one database's).
cluster_start "$name" "$version" $((6090 + version - 15)) "${BENCH_SETTINGS[@]}"
trap 'cluster_stop "$name"' EXIT
cluster_psql "$name" -q -f "$BENCH_DIR/setup.sql" -f "$BENCH_DIR/sql_edition_setup.sql" >/dev/null
declare -A layouts=([second_ticks]='time:31/1s, sequence:22, node:2, slot:8' [worker_first]='worker-first'
  [second_ticks_worker_first]='time:31/1s, node:2, slot:8, sequence:22')
declare -A nodes=([second_ticks]=1 [worker_first]=2 [second_ticks_worker_first]=3)
databases=(postgres second_ticks worker_first second_ticks_worker_first)
for db in "${databases[@]}"; do
  [[ $db == postgres ]] || sql "$name" "CREATE DATABASE $db OWNER master"
  # Each install claims node 0, postgres's: the later ones warn so until configured.
  cluster_psql "$name" -q -d "$db" -U master -v schema=snowflake -f "$release/snowflake_sql--$edition.sql" >/dev/null
  [[ $db == postgres ]] ||
    sql "$name" "SELECT snowflake.snowflake_configure(node_id => ${nodes[$db]}, layout => '${layouts[$db]}')" -d "$db" -U master >/dev/null
done
for db in "${databases[@]}"; do
  sql "$name" "CREATE TABLE t_sql_edition (id bigint PRIMARY KEY DEFAULT snowflake.snowflake_next(), payload int NOT NULL)" -d "$db"
done
cluster_stop "$name"

# instructions DATABASE TABLE N: callgrind's total for a single-user backend of DATABASE
# running N single-row inserts into t_TABLE.
instructions() {
  local i
  for ((i = 0; i < $3; i++)); do echo "INSERT INTO t_$2 (payload) VALUES (1);"; done >"$dir/inserts.sql"
  as_pg valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin/postgres" --single -D "$dir/data" \
    -c jit=off "$1" <"$dir/inserts.sql" 2>"$dir/valgrind.log" >"$dir/single.log" ||
    { cat "$dir/valgrind.log" >&2; return 1; }
  ! grep -q ERROR "$dir/single.log" || { grep -m3 ERROR "$dir/single.log" >&2; return 1; }
  sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$dir/valgrind.log"
}

# label DATABASE:TABLE: the key default as the report names it.
declare -A labels=([postgres:bigserial]='bigserial'
  [postgres:plpgsql_nextval]='definer returning nextval()' [postgres:next_id]="Instagram's next_id()"
  [postgres:uuid_generate_v7]='PL/pgSQL uuid_generate_v7()'
  [postgres:sql_edition]='SQL edition, a new ms each call' [second_ticks:sql_edition]='SQL edition, a tick, clock ahead'
  [worker_first:sql_edition]='the same, worker-first, a new ms' [second_ticks_worker_first:sql_edition]='the same, worker-first, a tick')
candidates=(postgres:bigserial postgres:plpgsql_nextval postgres:next_id postgres:uuid_generate_v7
  postgres:sql_edition second_ticks:sql_edition worker_first:sql_edition second_ticks_worker_first:sql_edition)
# row DATABASE:TABLE LABEL: the instructions of an insert into t_TABLE of DATABASE, and
# over bigserial's (base, the first row's), under LABEL. A first backend does once what a
# server does once (the SQL edition's code made again for this server life's first
# session, say): then one insert, then N.
row() {
  local one many per
  instructions "${1%%:*}" "${1#*:}" 1 >/dev/null
  one=$(instructions "${1%%:*}" "${1#*:}" 1)
  many=$(instructions "${1%%:*}" "${1#*:}" "$INSERTS")
  per=$(((many - one) / (INSERTS - 1)))
  base=${base:-$per}
  printf '  %-34s %12d %14d\n' "$2" "$per" $((per - base))
}
{
  echo "snowflake_sql instructions per single-row insert on PostgreSQL $version ($("$bin/postgres" --version))"
  echo "command:     bash bench/sql_edition_profile.sh $version (INSERTS=$INSERTS)"
  echo "date:        $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "editions:    snowflake_sql $edition; valgrind --tool=callgrind, postgres --single, one"
  echo "             transaction a statement: (Ir of $INSERTS inserts - Ir of 1) / $((INSERTS - 1))"
  printf '  %-34s %12s %14s\n' 'key default' 'Ir/insert' 'over bigserial'
  base=
  for candidate in "${candidates[@]}"; do
    row "$candidate" "${labels[$candidate]}"
  done
  # Within a tick again, with follow_clock off (docs/managed.md, "The order of ids"): every
  # call takes the next number of the tick.
  cluster_launch "$name" $((6090 + version - 15)) "${BENCH_SETTINGS[@]}" >/dev/null
  sql "$name" "SELECT snowflake.snowflake_configure(follow_clock => false)" -d second_ticks -U master >/dev/null
  cluster_stop "$name" >/dev/null
  row second_ticks:sql_edition 'the same, follow_clock off'
} | tee "$results"
echo "written to ${results#"$SNOWFLAKE_PG_ROOT"/}" >&2
