#!/usr/bin/env bash
# Builds pg_tle 1.5.2 (AWS's Trusted Language Extensions, how RDS, Aurora and Supabase
# take an extension written in SQL) and installs it into PostgreSQL 15, 16, 17 and 18, as
# root, so that tests/sql_edition.sh can install the SQL edition the way those services
# do. pg_tle is in no archive: its source sits in ../shared/pg_tle beside the clone (see
# its README). A major where it is installed already is skipped; a build that fails is
# logged (pg_tle_failed_log below) and the others carry on, and the test then says SKIP for
# pg_tle on that major. Builds happen under /var/lib/snowflake_pg, never in the clone.
# Usage: bash scripts/setup-pg_tle.sh [MAJOR...]   (all supported majors by default)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"

tarball=$SNOWFLAKE_PG_ROOT/../shared/pg_tle/pg_tle-1.5.2.tar.gz
build_root=/var/lib/snowflake_pg/pg_tle-build

say() { printf '== setup-pg_tle: %s\n' "$*"; }

# pg_tle_failed_log V: where a failed build of pg_tle for PostgreSQL V is kept (the test
# prints its last lines when it skips); removed by a later build that succeeds.
pg_tle_failed_log() { echo "/var/lib/snowflake_pg/pg_tle-1.5.2-pg$1.failed.log"; }

# pg_tle_installed V: the library and the control file are in PostgreSQL V's directories.
pg_tle_installed() {
  local pg_config
  pg_config=$(pg_config_of "$1") || return 1
  [[ -f $("$pg_config" --pkglibdir)/pg_tle.so && -f $("$pg_config" --sharedir)/extension/pg_tle.control ]]
}

# pg_tle_loads V: every symbol pg_tle.so needs from the server is one that V's postgres
# exports. A library built against headers of another minor can miss one (PostgreSQL 17's
# wheel with Debian 13's headers: heap_datum_check), and a server preloading it would not
# start: such a build counts as failed.
pg_tle_loads() {
  local pg_config missing
  pg_config=$(pg_config_of "$1") || return 1
  missing=$(comm -23 <(nm -D --undefined-only "$("$pg_config" --pkglibdir)/pg_tle.so" | awk '$1 == "U" && $2 !~ /@/ { print $2 }' | sort -u) \
                     <(nm -D --defined-only "$("$pg_config" --bindir)/postgres" | awk '{ print $3 }' | sort -u))
  [[ -z $missing ]] || { echo "pg_tle.so needs symbols that postgres $1 does not export: $missing"; return 1; }
}

# build_pg_tle V: a fresh copy of the source for V, built and installed with the flags the
# README of ../shared/pg_tle gives for that major's build of PostgreSQL.
build_pg_tle() {
  local version=$1 pg_config dir flags
  pg_config=$(pg_config_of "$version") || return 1
  dir=$build_root/pg$version
  rm -rf "$dir" && mkdir -p "$dir"
  tar -xzf "$tarball" -C "$dir" --strip-components=1
  # The compiler that the major's CFLAGS ask for, no bitcode nor debug information
  # (c_make_flags); the pgserver wheel's pgxs (16) does not know where flex is.
  mapfile -t flags < <(c_make_flags "$version")
  [[ $version != 16 ]] || flags+=("FLEX=$(command -v flex)")
  make -C "$dir" PG_CONFIG="$pg_config" "${flags[@]}" && make -C "$dir" PG_CONFIG="$pg_config" "${flags[@]}" install || return 1
  local why
  # Uninstalled again, so that no server is configured to preload a library it cannot load;
  # the reason goes last, where the summary shows the log's tail.
  why=$(pg_tle_loads "$version") ||
    { make -C "$dir" PG_CONFIG="$pg_config" "${flags[@]}" uninstall >/dev/null; echo "$why"; return 1; }
}

if [[ ! -f $tarball ]]; then
  say "no $tarball: pg_tle is not installed (the SQL edition's test skips its pg_tle part)"
  exit 0
fi
# flex generates pg_tle's parser of extension control text; scripts/setup.sh installs it.
command -v flex >/dev/null || { echo "pg_tle needs flex: run scripts/setup.sh" >&2; exit 1; }
mkdir -p "$build_root"

versions=("$@")
((${#versions[@]})) || versions=("${PG_HOST_VERSIONS[@]}")
for version in "${versions[@]}"; do
  pg_config=$(pg_config_of "$version") || exit 2
  if [[ ! -x $pg_config ]]; then
    say "PostgreSQL $version is not installed ($pg_config): skipped"
    continue
  fi
  if pg_tle_installed "$version" && pg_tle_loads "$version" >/dev/null; then
    say "pg_tle is installed in PostgreSQL $version already"
    continue
  fi
  log=$(pg_tle_failed_log "$version")
  # A build that failed is not tried at every setup: setup stays quick when run again.
  if [[ -f $log ]]; then
    say "pg_tle failed for PostgreSQL $version before (see $log; remove it to try again): its tests say SKIP there"
    continue
  fi
  say "building pg_tle 1.5.2 for PostgreSQL $version"
  if build_pg_tle "$version" >"$log.new" 2>&1 && pg_tle_installed "$version"; then
    rm -f "$log" "$log.new"
    say "pg_tle installed in PostgreSQL $version"
  else
    mv -f "$log.new" "$log"
    say "pg_tle did not build for PostgreSQL $version (carrying on); see $log:"
    tail -5 "$log"
  fi
done
