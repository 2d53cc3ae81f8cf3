#!/usr/bin/env bash
# The SQL edition (snowflake_sql, docs/managed.md) against its peers, on a fresh cluster per
# PostgreSQL version that has both editions:
#   1. call cost: CALLS calls of each candidate in one backend, in ROUNDS alternating
#      rounds after a warm-up round, timed in the server by bench_ms() (bench/bench_ms.sql),
#      as bench/calls.sh does: the SQL edition's snowflake_next(), the native's,
#      gen_random_uuid(), Instagram's next_id() and a PL/pgSQL uuid_generate_v7() as
#      published (bench/sql_edition_setup.sql), uuidv7() where the server has it, and an
#      empty PL/pgSQL function (the floor of any call the SQL edition can make);
#   2. and 3. single-row inserts (INSERT INTO t (payload) VALUES (1)) by pgbench -M
#      prepared with each client count of CLIENTS into a table keyed by each of: the SQL
#      edition's snowflake_next(), next_id(), uuid_generate_v7(), bigserial, and a SECURITY
#      DEFINER PL/pgSQL function that returns nextval() (the floor of any key a PL/pgSQL
#      function mints from sequences a caller may not write), in PGBENCH_ROUNDS alternating
#      rounds of DURATION seconds, each on an emptied table after a checkpoint: first with
#      commits that wait for no disk (fsync, full_page_writes and synchronous_commit off),
#      then, the server restarted, with durable ones (all three on).
# Medians and ratios of medians, the verdicts against the issue's targets (a call at most
# 2x gen_random_uuid()'s; 8 clients inserting at least as fast as with next_id() and with
# uuid_generate_v7(), both ways of committing). The machine
# may be shared: the report gives the load average before and after. Prints the report
# and writes it to bench/results/sql-edition-pgV.txt.
# Usage: bash bench/sql_edition.sh [15|16|17|18 ...]   (15 and 18 by default; the native
# extension installed, as scripts/setup.sh does). Sizes from the environment (bench/common.sh):
#   SQL_EDITION_CALLS=200000 ROUNDS=7 PGBENCH_ROUNDS=3 DURATION=10 CLIENTS="2 8" bash bench/sql_edition.sh
# Ports 6080+(V-15), clusters named sqlbenchV.
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# A call of the SQL edition costs microseconds: a tenth of bench/run.sh's calls suffices.
CALLS=${SQL_EDITION_CALLS:-200000}
# The cluster settings of bench/run.sh, for the same reasons (docs/performance.md, "Method"),
# with commits that wait for no disk; the durable rounds turn the three back on.
no_disk=(fsync=off full_page_writes=off synchronous_commit=off)
durable=(fsync=on full_page_writes=on synchronous_commit=on)
shared=()
for setting in "${BENCH_SETTINGS[@]}"; do
  [[ $setting =~ ^(fsync|full_page_writes|synchronous_commit)= ]] || shared+=("$setting")
done
versions=("$@")
((${#versions[@]})) || versions=(15 18)
release=$SNOWFLAKE_PG_ROOT/target/sql-edition-bench
"$SNOWFLAKE_PG_ROOT/sql_edition/build.sh" "$release" >/dev/null
edition=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$SNOWFLAKE_PG_ROOT/sql_edition/snowflake_sql.control")

for version in "${versions[@]}"; do
  pg_major "$version" >/dev/null
  name=sqlbench$version results=$BENCH_DIR/results/sql-edition-pg$version.txt started=$SECONDS
  port=$((6080 + version - 15))
  note "$name" "starting a cluster on port $port"
  cluster_start "$name" "$version" "$port" "${shared[@]}" "${no_disk[@]}"
  trap 'cluster_stop "$name"; rm -f "$results.tmp"' EXIT
  # The peers, the samples and the verdicts of bench/run.sh; the SQL edition installed as a
  # managed service's master user would (not a superuser), into schema snowflake.
  cluster_psql "$name" -q -f "$BENCH_DIR/setup.sql" -f "$BENCH_DIR/sql_edition_setup.sql" >/dev/null
  cluster_psql "$name" -q -d postgres -U master -v schema=snowflake -f "$release/snowflake_sql--$edition.sql" >/dev/null
  sql "$name" "CREATE TABLE t_sql_edition (id bigint PRIMARY KEY DEFAULT snowflake.snowflake_next(), payload int NOT NULL)"
  dir=$(cluster_dir "$name")
  {
    echo "snowflake_sql (the SQL edition) benchmarks on PostgreSQL $version"
    printf '%-12s %s\n' command: "bash bench/sql_edition.sh $version (with the sizes below)" \
      date: "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" \
      machine: "$(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), nproc $(nproc)" \
      'load avg:' "$(cut -d' ' -f1-3 /proc/loadavg) (at start; the machine may run other work)" \
      postgresql: "$(sql "$name" "SELECT version()")" \
      editions: "$(sql "$name" "SELECT format('snowflake_sql %s, snowflake_pg %s', snowflake.snowflake_sql_version(),
        (SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'))")" \
      parameters: "ROUNDS=$ROUNDS SQL_EDITION_CALLS=$CALLS PGBENCH_ROUNDS=$PGBENCH_ROUNDS DURATION=$DURATION CLIENTS=\"$CLIENTS\"" \
      settings: "${shared[*]} ${no_disk[*]}, then ${durable[*]}"

    candidates=(g 'plpgsql_floor()' 'snowflake.snowflake_next()' 'public.snowflake_next()'
      'gen_random_uuid()' 'insta5.next_id()' 'uuid_generate_v7()')
    if has_uuidv7 "$name"; then candidates+=('uuidv7()'); fi
    # All rounds in one session (one backend, its caches warm, the SQL edition's slot
    # taken), after a warm-up round of a tenth of the calls; call_round rotates the list.
    list=$(printf "\$q\$%s\$q\$," "${candidates[@]}")
    list="ARRAY[${list%,}]"
    {
      echo "SELECT count(bench_ms(c, $((CALLS / 10 + 1)))) FROM unnest($list) c;"
      for ((r = 1; r <= ROUNDS; r++)); do echo "SELECT call_round($r, $CALLS, $list);"; done
    } | cluster_psql "$name" -q >/dev/null

    tables=(sql_edition next_id uuid_generate_v7 bigserial plpgsql_nextval)
    for t in "${tables[@]}"; do echo "INSERT INTO t_$t (payload) VALUES (1);" >"$dir/insert_$t.sql"; done
    for section in insert insert_durable; do
      if [[ $section == insert_durable ]]; then
        note "$name" "durable commits: the server restarted with ${durable[*]}"
        cluster_stop "$name"
        cluster_launch "$name" "$port" "${shared[@]}" "${durable[@]}"
      fi
      for c in $CLIENTS; do
        for ((r = 1; r <= PGBENCH_ROUNDS; r++)); do
          note "$name" "$section, $c clients: round $r of $PGBENCH_ROUNDS"
          for t in $(rotate "$r" "${tables[@]}"); do
            sql "$name" "TRUNCATE t_$t" -c CHECKPOINT
            sample "$name" "$section" "$t" "$c" "$r" "$(tps "$name" "$c" -f "$dir/insert_$t.sql" -T "$DURATION")"
          done
        done
      done
    done
    report "$name" sql_edition
    echo
    echo "load avg:    $(cut -d' ' -f1-3 /proc/loadavg) (at the end)"
    echo "run time:    $((SECONDS - started)) s"
  } | tee "$results.tmp"
  mv "$results.tmp" "$results"
  cluster_stop "$name"
  note "$name" "written to ${results#"$SNOWFLAKE_PG_ROOT"/}"
done
