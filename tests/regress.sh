#!/usr/bin/env bash
# The pg_regress suite in tests/regress (what psql users see, error messages included)
# against a fresh cluster of one PostgreSQL version, with the extension installed. The
# tests are the files tests/regress/sql/NAME.sql; their results and any diffs go to
# target/regress-pgV. A test that creates the extension runs before the others, which
# use it; when none of the tests run does, pg_regress creates it first.
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
"$pg_regress" --bindir="$(pg_bin_of "$version")" --host="$CLUSTERS_DIR/$name" \
  --port="$(cluster_port "$name")" --user=postgres --inputdir="$SNOWFLAKE_PG_ROOT/tests/regress" \
  --outputdir="$out" --dbname=snowflake_regress "${options[@]}" "${tests[@]}" ||
  { cat "$out/regression.diffs" 2>/dev/null; exit 1; }
