#!/bin/sh
# Installs snowflake_pg @VERSION@ for PostgreSQL @MAJOR@ from this directory into the
# server whose pg_config is given (the pg_config on PATH by default): the library into its
# `pg_config --pkglibdir`, the control file and the SQL scripts into its
# `pg_config --sharedir`/extension. Run it as the user who owns those directories (root,
# usually). Each file goes in under a temporary name and is then renamed into place, so a
# running server keeps the library it loaded until it restarts.
# Usage: sh install.sh [/path/to/pg_config]
set -eu
pg_config=${1:-pg_config}
here=$(cd "$(dirname "$0")" && pwd)
major=$("$pg_config" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
if [ "$major" != @MAJOR@ ]; then
  echo "install.sh: these files are for PostgreSQL @MAJOR@; $pg_config is of PostgreSQL ${major:-(unknown)}" >&2
  exit 1
fi
libdir=$("$pg_config" --pkglibdir)
extdir=$("$pg_config" --sharedir)/extension
put() { # put FILE DIR
  mkdir -p "$2"
  cp "$1" "$2/.$(basename "$1").new.$$"
  chmod 644 "$2/.$(basename "$1").new.$$"
  mv -f "$2/.$(basename "$1").new.$$" "$2/$(basename "$1")"
}
put "$here/lib/snowflake_pg.so" "$libdir"
for file in "$here"/extension/*; do put "$file" "$extdir"; done
echo "snowflake_pg @VERSION@ installed into PostgreSQL $major: $libdir/snowflake_pg.so, $extdir/snowflake_pg*"
echo "then, in each database: CREATE EXTENSION snowflake_pg; (or, from an earlier version: ALTER EXTENSION snowflake_pg UPDATE;)"
