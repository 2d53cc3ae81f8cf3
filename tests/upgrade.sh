#!/usr/bin/env bash
# The fast upgrade test: from every release whose install script is frozen in sql/releases/
# (sql/releases/snowflake_pg--X.sql) to the current version, Cargo.toml's, by ALTER EXTENSION ...
# UPDATE through the upgrade scripts in turn (0.1.0 by way of every later release). Each
# updated schema must equal a fresh install's (pg_dump --binary-upgrade), and the
# pg_regress suite must pass against each updated database. Fails at once when the current
# version has no upgrade script from the release before it.
# Usage: bash tests/upgrade.sh 15|16|17|18|19   (with the current build installed)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
version=${1:?usage: upgrade.sh 15|16|17|18|19}
pg_major "$version" >/dev/null
current=$(extension_version)
mapfile -t releases < <(extension_versions | grep -vxF "$current")
((${#releases[@]})) || { echo "no frozen install script in sql/releases/" >&2; exit 1; }
previous=${releases[-1]}
[[ -f $SNOWFLAKE_PG_ROOT/sql/snowflake_pg--$previous--$current.sql ]] || {
  echo "FAIL: Cargo.toml's version $current has no upgrade script from $previous, the release" \
    "before it: write sql/snowflake_pg--$previous--$current.sql (and freeze" \
    "sql/releases/snowflake_pg--$previous.sql if it is not yet)" >&2
  exit 1
}

name=upgrade-fast$version
cluster_start "$name" "$version" $((5480 + version))
trap 'cluster_stop "$name"' EXIT
sql "$name" "CREATE DATABASE fresh"
sql "$name" "CREATE EXTENSION snowflake_pg" -d fresh
for release in "${releases[@]}"; do
  db=from_${release//./_}
  sql "$name" "CREATE DATABASE $db"
  sql "$name" "CREATE EXTENSION snowflake_pg VERSION '$release'" -c "ALTER EXTENSION snowflake_pg UPDATE" -d "$db"
  reached=$(sql "$name" "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'" -d "$db")
  [[ $reached == "$current" ]] || { echo "FAIL: $release updated to $reached, not $current" >&2; exit 1; }
  diff <(extension_schema "$name" fresh) <(extension_schema "$name" "$db") >"$CLUSTERS_DIR/$name/$db.diff" ||
    { echo "FAIL: updated from $release, the schema differs from a fresh $current install:" >&2
      head -30 "$CLUSTERS_DIR/$name/$db.diff" >&2; exit 1; }
  REGRESS_UPDATED_FROM=$release bash "$SNOWFLAKE_PG_ROOT/tests/regress.sh" "$version" >"$CLUSTERS_DIR/$name/$db.regress" 2>&1 ||
    { cat "$CLUSTERS_DIR/$name/$db.regress" >&2; echo "FAIL: the pg_regress suite, updated from $release" >&2; exit 1; }
  echo "ok $release -> $current (PostgreSQL $version): the schema equals a fresh install's; pg_regress $(grep -o 'All [0-9]* tests passed' "$CLUSTERS_DIR/$name/$db.regress")"
done
