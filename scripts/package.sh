#!/usr/bin/env bash
# Builds the Debian package of snowflake_pg for Debian's PostgreSQL V, named and laid out
# as Debian's own extension packages are (postgresql-V-<name>): the library in
# /usr/lib/postgresql/V/lib, the control file and the install and upgrade scripts in
# /usr/share/postgresql/V/extension, the license, README and changelog in
# /usr/share/doc/<package>. The build is `cargo pgrx package`; every
# sql/snowflake_pg--*.sql of the repository (earlier versions' install scripts, upgrade
# scripts) goes in beside the install script pgrx generates for this version.
# Prints the path of target/debian/postgresql-V-snowflake-pg_<version>-1_<arch>.deb.
# Exits 3, doing nothing, when PostgreSQL V here is not Debian's (16, 17 and 18 come from
# wheels).
# Usage: bash scripts/package.sh 15
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pg=${1:?usage: package.sh 15}

pg_config=$(pg_config_of "$pg")
libdir=$("$pg_config" --pkglibdir)
if [[ $libdir != "/usr/lib/postgresql/$pg/lib" ]] ||
  ! dpkg-query -W -f='${Status}' "postgresql-$pg" 2>/dev/null | grep -q "install ok installed"; then
  echo "package.sh: PostgreSQL $pg here is not Debian's postgresql-$pg (its libraries are in $libdir):" \
    "the packages are for Debian's PostgreSQL, whose paths they install into and which they depend on" >&2
  exit 3
fi

version=$(cd "$SNOWFLAKE_PG_ROOT" && cargo pkgid) # path+file:///...#snowflake_pg@X.Y.Z
version=${version##*[#@]}
package=postgresql-$pg-snowflake-pg
deb=$SNOWFLAKE_PG_ROOT/target/debian/${package}_$version-1_$(dpkg --print-architecture).deb
root=$SNOWFLAKE_PG_ROOT/target/debian/$package
rm -f "$deb"
stage_extension "$pg" "$root" || exit 1

doc=$root/usr/share/doc/$package
mkdir -p "$doc"
{ # machine-readable (DEP 5), with the license text of LICENSE
  echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
  echo "Upstream-Name: snowflake_pg"
  echo
  echo "Files: *"
  echo "Copyright: $(sed -n 's/^Copyright (c) //p' "$SNOWFLAKE_PG_ROOT/LICENSE")"
  echo "License: PostgreSQL"
  sed -e 's/^$/./' -e 's/^/ /' "$SNOWFLAKE_PG_ROOT/LICENSE"
} >"$doc/copyright"
gzip -9n <"$SNOWFLAKE_PG_ROOT/README.md" >"$doc/README.md.gz"
gzip -9n <"$SNOWFLAKE_PG_ROOT/CHANGELOG.md" >"$doc/changelog.gz"
# Debian's modes: directories 755, files 644, shared libraries included.
find "$root" -type d -exec chmod 755 {} +
find "$root" -type f -exec chmod 644 {} +

mkdir -p "$root/DEBIAN"
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
cat >"$root/DEBIAN/control" <<EOF
Package: $package
Version: $version-1
Architecture: $(dpkg --print-architecture)
Maintainer: The snowflake_pg developers
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Depends: postgresql-$pg
Section: database
Priority: optional
Description: time-ordered, cluster-unique 64-bit ids for PostgreSQL $pg
 snowflake_pg mints Twitter-Snowflake ids inside the database: 64 bits,
 time-ordered, unique across every backend of a server and across the servers
 of a cluster, with no lock on the hot path. It also turns a time into an id
 bound for time-range scans on the primary key, and an id back into its parts.
 .
 This package is for PostgreSQL $pg.
EOF
dpkg-deb --build --root-owner-group "$root" "$deb" >>"$root.log" 2>&1 || { cat "$root.log" >&2; exit 1; }
echo "$deb"
