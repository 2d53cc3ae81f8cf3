#!/usr/bin/env bash
# 7. Density under concurrent writers: how full concurrent writers leave each key default's
# primary-key index. For each writer count of DENSITY_WRITERS, pgbench -M prepared (one
# client a writer) fills the emptied table of each key default, one run a cell, with two
# loads: DENSITY_ROWS rows one a transaction, and DENSITY_BATCH_ROWS rows in transactions
# of DENSITY_BATCH (INSERT ... SELECT ... FROM generate_series); after each, the index's
# pg_relation_size and pgstattuple's avg_leaf_density. The keys: snowflake_next() on the
# bench cluster (stock) and on a second cluster of the same settings that preloads the
# library, the SQL edition's snowflake_next() (built from sql_edition/ and installed as
# bench/sql_edition.sh installs it), the same with follow_clock off (docs/managed.md,
# "The order of ids"), bigserial, gen_random_uuid() and uuidv7() where the server has it. Then
# the order: 8 writers insert DENSITY_ORDER_ROWS rows, one a transaction, each row with
# clock_timestamp() read right after its id; sorted by id, the share of neighbours whose
# clock goes back by more than 0.1 ms, for snowflake_next(), the SQL edition (both ways)
# and bigserial. About 4 minutes a version with the defaults, on 2 cores: not in the
# default SECTIONS.
# Usage: bash bench/density.sh CLUSTER   (run by bench/run.sh: SECTIONS=density bash bench/run.sh 15 18)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=$1
version=$(cluster_version "$name")
preload=$name-preload
order_writers=8

# The preloading server: the bench cluster's settings and objects, on a port of its own.
trap 'cluster_stop "$preload"' EXIT
cluster_start "$preload" "$version" $((5760 + version - 15)) "${BENCH_SETTINGS[@]}" \
  shared_preload_libraries=snowflake_pg
cluster_psql "$preload" -q -f "$BENCH_DIR/setup.sql" -c "CREATE EXTENSION pgstattuple" >/dev/null

# The SQL edition, as a managed service's master user installs it (not a superuser), into
# schema snowflake, from the build of the tree as it is: its file's checksum names the build.
release=$SNOWFLAKE_PG_ROOT/target/density-sql-edition
"$SNOWFLAKE_PG_ROOT/sql_edition/build.sh" "$release" >/dev/null
edition=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$SNOWFLAKE_PG_ROOT/sql_edition/snowflake_sql.control")
cluster_psql "$name" -q -f "$BENCH_DIR/sql_edition_setup.sql" -c "CREATE EXTENSION pgstattuple" >/dev/null
cluster_psql "$name" -q -d postgres -U master -v schema=snowflake -f "$release/snowflake_sql--$edition.sql" >/dev/null
sql "$name" "CREATE TABLE t_sql_edition (id bigint PRIMARY KEY DEFAULT snowflake.snowflake_next(), payload int NOT NULL)"

# The candidates, as the samples name them: the tables of the bench cluster (bench/setup.sql),
# with the preloaded server's snowflake_next() and the SQL edition's after the stock one.
candidates=()
for t in $(key_tables "$name"); do
  candidates+=("$t")
  if [[ $t == snowflake ]]; then candidates+=(preloaded sql_edition sql_tick_first); fi
done

# follow_clock BOOLEAN: the SQL edition's setting (on by default), as its owner sets it;
# sessions then mint by the code it makes.
follow_clock() { sql "$name" "SELECT snowflake.snowflake_configure(follow_clock => $1)" -d postgres -U master >/dev/null; }

# leaf_density NAME TABLE: pgstattuple's average leaf density of t_TABLE's primary-key
# index, in percent.
leaf_density() { sql "$1" "SELECT avg_leaf_density FROM pgstatindex('t_${2}_pkey')"; }

# cell CANDIDATE WRITERS N: CANDIDATE's table emptied and filled by WRITERS writers in
# N-row transactions (the rows of that load); its index's size and leaf density kept.
cell() {
  local server=$name table=$1 rows=$DENSITY_ROWS
  if [[ $1 == preloaded ]]; then server=$preload table=snowflake; fi
  if [[ $1 == sql_tick_first ]]; then table=sql_edition && follow_clock false; fi
  if (($3 > 1)); then rows=$DENSITY_BATCH_ROWS; fi
  sample "$name" "size/$3" "$1" "$2" 1 "$(concurrent_index "$server" "$table" "$rows" "$2" "$3")"
  sample "$name" "density/$3" "$1" "$2" 1 "$(leaf_density "$server" "$table")"
  sql "$server" "TRUNCATE t_$table"
  if [[ $1 == sql_tick_first ]]; then follow_clock true; fi
}

# Each writer count starts the list from another candidate (bench/common.sh's rotate), so
# that none always runs first.
for n in 1 "$DENSITY_BATCH"; do
  i=0
  for w in $DENSITY_WRITERS; do
    i=$((i + 1))
    note "$name" "density: $n-row transactions, $w writers"
    for c in $(rotate "$i" "${candidates[@]}"); do cell "$c" "$w" "$n"; done
  done
done

# The order. Each row's at is read right after its id, as the executor computes a row's
# defaults in the order of its columns: checked on a table of two clock_timestamp()
# defaults, whose rows with the second before the first are counted (none, if so).
sample "$name" order_check columns 1 1 "$(sql "$name" "CREATE TEMP TABLE clock_order (a timestamptz DEFAULT clock_timestamp(),
    b timestamptz DEFAULT clock_timestamp(), n int)" -c "INSERT INTO clock_order (n) SELECT generate_series(1, 100000)" \
  -c "SELECT count(*) FILTER (WHERE b < a) FROM clock_order")"
at="at timestamptz NOT NULL DEFAULT clock_timestamp()"
sql "$name" "CREATE TABLE t_order_snowflake (id bigint PRIMARY KEY DEFAULT snowflake_next(), payload int NOT NULL, $at)" \
  -c "CREATE TABLE t_order_sql_edition (id bigint PRIMARY KEY DEFAULT snowflake.snowflake_next(), payload int NOT NULL, $at)" \
  -c "CREATE TABLE t_order_sql_tick_first (id bigint PRIMARY KEY DEFAULT snowflake.snowflake_next(), payload int NOT NULL, $at)" \
  -c "CREATE TABLE t_order_bigserial (id bigserial PRIMARY KEY, payload int NOT NULL, $at)"
note "$name" "density: the order of $order_writers writers' ids"
for k in snowflake sql_edition sql_tick_first bigserial; do
  if [[ $k == sql_tick_first ]]; then follow_clock false; fi
  tps "$name" "$order_writers" -f "$(insert_script "$name" "order_$k" 1)" \
    -t $((DENSITY_ORDER_ROWS / order_writers)) >/dev/null
  read -r share back < <(sql "$name" "SELECT count(*) FILTER (WHERE back > 0.1) * 100.0 / (count(*) - 1),
      greatest(max(back), 0)
    FROM (SELECT extract(epoch FROM lag(at) OVER (ORDER BY id) - at) * 1000 AS back FROM t_order_$k) s" -F ' ')
  sample "$name" order "$k" "$order_writers" 1 "$share"
  sample "$name" order_back "$k" "$order_writers" 1 "$back"
  if [[ $k == sql_tick_first ]]; then follow_clock true; fi
done
sample "$name" order_rows rows "$order_writers" 1 "$(sql "$name" "SELECT count(*) FROM t_order_bigserial")"
report "$name" density
echo "   (SQL edition: snowflake_sql $(sql "$name" "SELECT snowflake.snowflake_sql_version()"), built from the tree's" \
  "sql_edition/; sha256 of snowflake_sql--$edition.sql: $(sha256sum "$release/snowflake_sql--$edition.sql" | cut -c1-12))"
