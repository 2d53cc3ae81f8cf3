#!/usr/bin/env bash
# Assembles the release files of the SQL edition (snowflake_sql) from sql_edition/src/*.sql
# into OUTDIR:
#   snowflake_sql--V.sql          for `psql -v schema=NAME -f` (Cloud SQL, AlloyDB, Azure, Neon):
#                                 installs into schema NAME (default snowflake), and run again
#                                 on an install of an earlier release, updates it;
#   snowflake_sql--V--pg_tle.sql  for `psql -f` on a server with pg_tle (RDS, Aurora, Supabase):
#                                 registers version V (pgtle.install_extension, or
#                                 install_extension_version_sql when an earlier one is
#                                 registered), an update path from each --from version, and V
#                                 as the default version; then CREATE EXTENSION snowflake_sql
#                                 or ALTER EXTENSION snowflake_sql UPDATE.
# Usage: sql_edition/build.sh OUTDIR [--version V] [--from EARLIER]...
# The version defaults to default_version of sql_edition/snowflake_sql.control. Every source
# file is idempotent (CREATE ... IF NOT EXISTS for what holds state, CREATE OR REPLACE for
# code), so one body is the install script and the update script from any earlier release.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() { echo "usage: $0 OUTDIR [--version V] [--from EARLIER]..." >&2; exit 2; }
[[ $# -ge 1 ]] || usage
out=$1; shift
control=$here/snowflake_sql.control
version=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$control")
comment=$(sed -n "s/^comment = '\(.*\)'$/\1/p" "$control")
from=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --version) version=${2:?}; shift 2 ;;
    --from) from+=("${2:?}"); shift 2 ;;
    *) usage ;;
  esac
done
# Versions go into SQL literals and file names.
for v in "$version" "${from[@]}"; do
  [[ $v =~ ^[0-9A-Za-z._-]+$ ]] || { echo "not a version: $v" >&2; exit 2; }
done
mkdir -p "$out"

# The body: the native extension's row type (sql/src/parts.sql, one source for both editions,
# made only where it is missing: a type cannot be replaced), every source file in order,
# @version@ filled in, then the native extension's SQL that carries over whole
# (snowflake_bounds, snowflake_key_holders, snowflake_convert), each function created or
# replaced in the edition's schema. It must not hold the quote tags that wrap it below,
# nor pg_tle's own delimiters.
grep -q '^CREATE TYPE snowflake_parts ' "$here/../sql/src/parts.sql" ||
  { echo "sql/src/parts.sql no longer creates snowflake_parts as this script expects" >&2; exit 1; }
body=$(
printf -- "-- sql/src/parts.sql, the native extension's\n"
printf '%s\n' "DO \$parts\$" 'BEGIN' "  IF pg_catalog.to_regtype('@extschema@.snowflake_parts') IS NULL THEN"
sed -e 's/^CREATE TYPE snowflake_parts /CREATE TYPE @extschema@.snowflake_parts /' "$here/../sql/src/parts.sql"
printf '%s\n' '  END IF;' 'END' "\$parts\$;" ''
for file in "$here"/src/*.sql; do
  printf -- '-- sql_edition/src/%s\n' "$(basename "$file")"
  sed "s/@version@/$version/g" "$file"
  echo
done
for file in "$here"/../sql/src/partitions.sql "$here"/../sql/src/convert.sql; do
  printf -- "-- sql/src/%s, the native extension's\n" "$(basename "$file")"
  sed -e 's/^CREATE FUNCTION snowflake_/CREATE OR REPLACE FUNCTION @extschema@.snowflake_/' \
    -e 's/^COMMENT ON FUNCTION snowflake_/COMMENT ON FUNCTION @extschema@.snowflake_/' "$file"
  echo
done)
# shellcheck disable=SC2016 # the tags are literal text
for tag in '$snowflake_sql_body$' '$snowflake_sql_release$' '$_pgtle_'; do
  [[ $body != *"$tag"* ]] || { echo "the source holds $tag" >&2; exit 1; }
done

# The psql script: the schema from the psql variable `schema`, the body run by one DO
# (so the install is one statement: all or nothing) with @extschema@ replaced by that
# schema, as CREATE EXTENSION replaces it.
cat >"$out/snowflake_sql--$version.sql" <<SQL
-- snowflake_sql $version: the SQL edition of snowflake_pg, for psql -f (docs/managed.md).
--   psql -v schema=snowflake -f snowflake_sql--$version.sql
-- installs it into the schema (created if missing; snowflake by default), or updates an
-- install of an earlier release there. Run it as the role that is to own the edition:
-- only that role may change its settings (snowflake_configure).
\\set ON_ERROR_STOP 1
\\if :{?schema}
\\else
\\set schema snowflake
\\endif
CREATE SCHEMA IF NOT EXISTS :"schema";
SET search_path = :"schema";
DO \$snowflake_sql_release\$
BEGIN
  EXECUTE pg_catalog.replace(\$snowflake_sql_body\$
$body
\$snowflake_sql_body\$, '@extschema@', pg_catalog.quote_ident(pg_catalog.current_schema()));
END
\$snowflake_sql_release\$;
GRANT USAGE ON SCHEMA :"schema" TO PUBLIC;
SELECT :'schema' AS schema, snowflake_sql_version() AS snowflake_sql;
SQL

# The pg_tle registration.
{
  cat <<SQL
-- snowflake_sql $version for pg_tle (docs/managed.md): registers the version with
-- pg_tle in this database, with update paths from earlier releases, as its default
-- version. Run by a member of pgtle_admin; then CREATE EXTENSION snowflake_sql [SCHEMA s]
-- (or ALTER EXTENSION snowflake_sql UPDATE).
\\set ON_ERROR_STOP 1
DO \$snowflake_sql_release\$
DECLARE
  body constant text := \$snowflake_sql_body\$
$body
\$snowflake_sql_body\$;
BEGIN
  IF NOT EXISTS (SELECT FROM pgtle.available_extensions() e WHERE e.name = 'snowflake_sql') THEN
    PERFORM pgtle.install_extension('snowflake_sql', '$version', '${comment//\'/\'\'}', body);
  ELSIF NOT EXISTS (SELECT FROM pgtle.available_extension_versions() e
                     WHERE e.name = 'snowflake_sql' AND e.version = '$version') THEN
    PERFORM pgtle.install_extension_version_sql('snowflake_sql', '$version', body);
  END IF;
SQL
  for v in "${from[@]}"; do
    cat <<SQL
  IF EXISTS (SELECT FROM pgtle.available_extension_versions() e
              WHERE e.name = 'snowflake_sql' AND e.version = '$v')
     AND NOT EXISTS (SELECT FROM pgtle.extension_update_paths('snowflake_sql') p
                      WHERE p.source = '$v' AND p.target = '$version' AND p.path = '$v--$version') THEN
    PERFORM pgtle.install_update_path('snowflake_sql', '$v', '$version', body);
  END IF;
SQL
  done
  cat <<SQL
  PERFORM pgtle.set_default_version('snowflake_sql', '$version');
END
\$snowflake_sql_release\$;
SQL
} >"$out/snowflake_sql--$version--pg_tle.sql"
echo "$out/snowflake_sql--$version.sql"
echo "$out/snowflake_sql--$version--pg_tle.sql"
