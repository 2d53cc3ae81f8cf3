#!/usr/bin/env bash
# Builds the release files of snowflake_pg into one directory, $RELEASE_FILES_DIR
# (target/release-files of the source by default), emptied first:
#   postgresql-N-snowflake-pg_<version>-1_<arch>.deb  for Debian's (or the PGDG's)
#       postgresql-N, named and laid out as Debian's own extension packages are: the
#       library in /usr/lib/postgresql/N/lib, the control file and the SQL scripts in
#       /usr/share/postgresql/N/extension, the license, README and changelog in
#       /usr/share/doc/<package>; Depends: postgresql-N;
#   snowflake_pg-<version>-pgN-<arch>-linux-gnu.tar.gz  for any other PostgreSQL N: the
#       library, the control file and the SQL scripts, and install.sh
#       (packaging/install.sh), which puts them where that server's pg_config says;
#   the SQL edition's two release files (sql_edition_files: sql_edition/build.sh, the
#       pg_tle file with an update path from every earlier release), where the source has it;
#   SHA256SUMS over all of them.
# One of each per PostgreSQL major N (all supported majors by default). Each is the release
# build that install_extension staged (`cargo pgrx package` against that major's pg_config
# and headers; staged anew where it is missing or older than a source file: staged_build),
# relocated from wherever that PostgreSQL lives here to Debian's paths, so that after the
# tests packaging compiles nothing. Every SQL script of the source (the upgrade scripts in
# sql/, earlier versions' install scripts in sql/releases/: extension_scripts) goes in
# beside the install script pgrx generates for this version.
# With --arch arm64 it packages for arm64 (aarch64) instead of this machine's amd64: the
# library cross-compiled in the build root (scripts/build-root.sh; sid's Rust has the
# only aarch64 std here) against Debian's arm64 server headers of V, the extension files
# those of V's own build here, which are the same on every architecture (pgrx makes the
# SQL from the code and the major, not from the machine).
# Every library is checked to need no newer glibc than the Debian release that packages
# its major (debian_release_of; bookworm's for 16, which none packages).
# A major whose PostgreSQL runs only in the build root (19), and every arm64 build, is
# built there: the script goes on in the root, the files landing where they would here.
# With --source DIR it packages another tree of the repository, such as an earlier
# release's (tests/package.sh builds 0.2.1's so), into DIR/target/release-files, with the
# cargo-pgrx of that tree's pgrx (cargo_pgrx_for).
# Prints the path of each file it wrote.
# Two runs may go side by side when their directories differ (tests/package.sh gives each
# major its own).
# Usage: bash scripts/package.sh [--source DIR] [--arch amd64|arm64] [MAJOR...]
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tools=$SNOWFLAKE_PG_ROOT
usage="usage: package.sh [--source DIR] [--arch amd64|arm64] [MAJOR...]"
arch=$(dpkg --print-architecture) host_arch=$(dpkg --print-architecture)
while [[ ${1:-} == --* ]]; do
  case $1 in
    --source)
      SNOWFLAKE_PG_ROOT=$(cd "${2:?$usage}" && pwd)
      PATH=$(cargo_pgrx_for "$SNOWFLAKE_PG_ROOT"):$PATH
      shift 2 ;;
    --arch) arch=${2:?$usage}; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
[[ $arch == "$host_arch" || $arch == arm64 ]] || { echo "package.sh: no build for $arch here (amd64, arm64)" >&2; exit 2; }
majors=("$@")
((${#majors[@]})) || majors=("${PG_VERSIONS[@]}")
for pg in "${majors[@]}"; do pg_major "$pg" >/dev/null; done

out=${RELEASE_FILES_DIR:-$SNOWFLAKE_PG_ROOT/target/release-files}
# The majors built here and those built in the build root: every major for arm64, the
# root's own (19) for amd64. The host's builds of the majors that run here come first:
# an arm64 package takes their extension files. Then the root's run adds its files to
# this run's (RELEASE_FILES_ADD), and writes SHA256SUMS over all of them.
here_majors=() root_majors=()
for pg in "${majors[@]}"; do
  if ! in_build_root_now && { in_build_root_major "$pg" || [[ $arch != "$host_arch" ]]; }; then
    root_majors+=("$pg")
    [[ $arch == "$host_arch" ]] || in_build_root_major "$pg" || staged_build "$pg" >/dev/null
  else
    here_majors+=("$pg")
  fi
done

version=$(extension_version)
work=$out.work # the packages' trees, beside the files: one per directory of files
if [[ -z ${RELEASE_FILES_ADD:-} ]]; then rm -rf "$out"; fi
rm -rf "$work" && mkdir -p "$out" "$work"

# deb V STAGE: the Debian package of PostgreSQL V from the staged build STAGE.
deb() {
  local pg=$1 stage=$2 package=postgresql-$1-snowflake-pg
  local root=$work/$package file=$out/${package}_$version-1_$arch.deb
  mkdir -p "$root/usr/lib/postgresql/$pg/lib" "$root/usr/share/postgresql/$pg/extension" "$root/usr/share/doc/$package"
  cp "$stage/lib/snowflake_pg.so" "$root/usr/lib/postgresql/$pg/lib/"
  cp "$stage"/extension/* "$root/usr/share/postgresql/$pg/extension/"
  { # machine-readable (DEP 5), with the license text of LICENSE
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: snowflake_pg"
    echo
    echo "Files: *"
    echo "Copyright: $(sed -n 's/^Copyright (c) //p' "$SNOWFLAKE_PG_ROOT/LICENSE")"
    echo "License: PostgreSQL"
    sed -e 's/^$/./' -e 's/^/ /' "$SNOWFLAKE_PG_ROOT/LICENSE"
  } >"$root/usr/share/doc/$package/copyright"
  gzip -9n <"$SNOWFLAKE_PG_ROOT/README.md" >"$root/usr/share/doc/$package/README.md.gz"
  gzip -9n <"$SNOWFLAKE_PG_ROOT/CHANGELOG.md" >"$root/usr/share/doc/$package/changelog.gz"
  # Debian's modes: directories 755, files 644, shared libraries included.
  find "$root" -type d -exec chmod 755 {} +
  find "$root" -type f -exec chmod 644 {} +
  mkdir -p "$root/DEBIAN"
  (cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
  cat >"$root/DEBIAN/control" <<CONTROL
Package: $package
Version: $version-1
Architecture: $arch
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
CONTROL
  dpkg-deb --build --root-owner-group "$root" "$file" >"$root.log" 2>&1 || { cat "$root.log" >&2; return 1; }
  echo "$file"
}

# tarball V STAGE: the tarball of PostgreSQL V from the staged build STAGE, its files
# owned by root and dated by the source's last commit, so that a rebuild is the same file.
tarball() {
  local pg=$1 stage=$2 name=snowflake_pg-$version-pg$1-$arch-linux-gnu
  local dir=$work/$name
  mkdir -p "$dir"
  cp -rL "$stage/lib" "$stage/extension" "$dir/"
  cp "$SNOWFLAKE_PG_ROOT/LICENSE" "$dir/"
  sed -e "s/@VERSION@/$version/g" -e "s/@MAJOR@/$pg/g" "$tools/packaging/install.sh" >"$dir/install.sh"
  find "$dir" -type d -exec chmod 755 {} + && find "$dir" -type f -exec chmod 644 {} + && chmod 755 "$dir/install.sh"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$(git -C "$tools" log -1 --format=%ct)" \
    -C "$work" -cf - "$name" | gzip -9n >"$out/$name.tar.gz"
  echo "$out/$name.tar.gz"
}

# cross_build V DIR: the library of PostgreSQL V for arm64 in DIR/lib, built against the
# arm64 headers of V and the answers of their pg_config (scripts/setup-build-root.sh),
# linked by the aarch64 cross linker; the extension files of V's staged build here in
# DIR/extension. Each major's library is kept (target/cross-arm64-pgV.so, with its build's
# log) and taken again while no source file is newer (sources_newer_than): cargo's own
# output is one file for every major, which the next major's build replaces, so a second
# packaging of the same tree (the release workflow's, after the tests') compiles nothing.
cross_build() {
  local pg=$1 dir=$2 vars control target=aarch64-unknown-linux-gnu
  local kept=$SNOWFLAKE_PG_ROOT/target/cross-arm64-pg$pg.so
  if sources_newer_than "$kept.log" || [[ ! -f $kept ]]; then
    mapfile -t vars <"/opt/arm64/pg$pg/pg_config.env"
    (cd "$SNOWFLAKE_PG_ROOT" && flock 9 && timed compiling env "${vars[@]}" \
      CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
      cargo build --quiet --release --lib --target "$target" --no-default-features --features "pg$pg" &&
      cp "$CARGO_TARGET_DIR/$target/release/libsnowflake_pg.so" "$kept.new" && mv -f "$kept.new" "$kept") \
      9>"${TMPDIR:-/tmp}/snowflake_pg-cross.lock" >"$kept.log.new" 2>&1 || { cat "$kept.log.new" >&2; return 1; }
    mv -f "$kept.log.new" "$kept.log"
  fi
  mkdir -p "$dir/lib"
  cp "$kept" "$dir/lib/snowflake_pg.so"
  control=$(find "$(extension_stage "$pg")" -name snowflake_pg.control -print -quit)
  [[ -n $control ]] || { echo "no build of PostgreSQL $pg staged in $(extension_stage "$pg")" >&2; return 1; }
  ln -s "$(dirname "$control")" "$dir/extension"
}

# glibc_checked V LIBRARY: fails, saying so, if LIBRARY needs a newer glibc than the Debian
# release that packages V has (bookworm's for a major no release packages), or than the
# docs promise (docs/packaging.md, "Which file for which server"; Ubuntu 22.04 takes the
# bookworm suite on it): 2.34, but 2.39 for 19's on amd64, built in sid.
glibc_checked() {
  local release promised=2.34
  release=$(debian_release_of "$1") && release=${release:-bookworm}
  glibc_fits "$2" "$release" ||
    { echo "the $arch library of PostgreSQL $1 needs glibc $(glibc_needed "$2"), newer than Debian $release's $(debian_glibc_of "$release")" >&2; return 1; }
  if [[ $1 == 19 && $arch == amd64 ]]; then promised=2.39; fi
  ! version_before "$promised" "$(glibc_needed "$2")" ||
    { echo "the $arch library of PostgreSQL $1 needs glibc $(glibc_needed "$2"); docs/packaging.md promises $promised" >&2; return 1; }
}

for pg in "${here_majors[@]}"; do
  mkdir -p "$work/pg$pg"
  if [[ $arch == "$host_arch" ]]; then
    pg_config=$(pg_config_of "$pg")
    stage=$(staged_build "$pg")
    # The staged build's two directories, wherever this PostgreSQL keeps them.
    ln -s "$stage$("$pg_config" --pkglibdir)" "$work/pg$pg/lib"
    ln -s "$stage$("$pg_config" --sharedir)/extension" "$work/pg$pg/extension"
  else
    cross_build "$pg" "$work/pg$pg"
  fi
  glibc_checked "$pg" "$work/pg$pg/lib/snowflake_pg.so"
  deb "$pg" "$work/pg$pg"
  tarball "$pg" "$work/pg$pg"
done
if ((${#root_majors[@]})); then
  in_build_root env RELEASE_FILES_DIR="$out" RELEASE_FILES_ADD=1 bash scripts/package.sh --arch "$arch" "${root_majors[@]}"
  exit
fi
if [[ -f $SNOWFLAKE_PG_ROOT/sql_edition/build.sh ]]; then # releases before 0.3.0 have no SQL edition
  sql_edition_files "$out"
fi
rm -f "$out/SHA256SUMS"
sums=$(cd "$out" && sha256sum -- *)
echo "$sums" >"$out/SHA256SUMS"
echo "$out/SHA256SUMS"
