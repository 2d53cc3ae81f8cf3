#!/usr/bin/env bash
# The pg_regress suite in tests/regress (what psql users see, error messages included)
# against a fresh cluster of one PostgreSQL version, with the extension installed. The
# tests are the files tests/regress/sql/NAME.sql; their results and any diffs go to
# target/regress-pgV. A test that creates the extension runs before the others, which
# use it; when none of the tests run does, pg_regress creates it first.
# With REGRESS_UPDATED_FROM=X the suite runs instead against a database whose extension
# was created as version X and updated (ALTER EXTENSION ... UPDATE): the statement that
# creates it becomes a LOAD of the library (which creating it does too), in the test and
# in its expected output alike.
# Usage: bash tests/regress.sh 15|16|17|18 [test ...]   (every test by default)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
version=${1:?usage: regress.sh 15|16|17|18 [test ...]}
pg_major "$version" >/dev/null
shift
requested=("$@")
if ((${#requested[@]} == 0)); then
  for file in "$SNOWFLAKE_PG_ROOT"/tests/regress/sql/*.sql; do requested+=("$(basename "$file" .sql)"); done
fi
tests=() users=() options=()
for test in "${requested[@]}"; do
  file=$SNOWFLAKE_PG_ROOT/tests/regress/sql/${test%.sql}.sql
  [[ -f $file ]] || { echo "no regress test $file" >&2; exit 2; }
  if grep -qi '^CREATE EXTENSION snowflake_pg' "$file"; then tests+=("${test%.sql}"); else users+=("${test%.sql}"); fi
done
((${#tests[@]})) || options=(--load-extension=snowflake_pg)
tests+=("${users[@]}")

name=regress$version out=$SNOWFLAKE_PG_ROOT/target/regress-pg$version
pg_regress=$(dirname "$("$(pg_config_of "$version")" --pgxs)")/../test/regress/pg_regress
cluster_start "$name" "$version" $((5440 + version))
trap 'cluster_stop "$name"' EXIT
rm -rf "$out" && mkdir -p "$out"
input=$SNOWFLAKE_PG_ROOT/tests/regress
if [[ -n ${REGRESS_UPDATED_FROM:-} ]]; then
  out+=-from-$REGRESS_UPDATED_FROM input=$out/input
  rm -rf "$out" && mkdir -p "$input"
  cp -r "$SNOWFLAKE_PG_ROOT"/tests/regress/{sql,expected} "$input/"
  sed -i "s/^CREATE EXTENSION snowflake_pg;\$/LOAD 'snowflake_pg'; -- the extension: version $REGRESS_UPDATED_FROM, updated/" \
    "$input"/sql/*.sql "$input"/expected/*.out
  sql "$name" "CREATE DATABASE snowflake_regress"
  sql "$name" "CREATE EXTENSION snowflake_pg VERSION '$REGRESS_UPDATED_FROM'" \
    -c "ALTER EXTENSION snowflake_pg UPDATE" -d snowflake_regress
  options=(--use-existing)
fi
"$pg_regress" --bindir="$(pg_bin_of "$version")" --host="$CLUSTERS_DIR/$name" \
  --port="$(cluster_port "$name")" --user=postgres --inputdir="$input" \
  --outputdir="$out" --dbname=snowflake_regress "${options[@]}" "${tests[@]}" ||
  { cat "$out/regression.diffs" 2>/dev/null; exit 1; }
