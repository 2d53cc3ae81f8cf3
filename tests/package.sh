#!/usr/bin/env bash
# The release files of PostgreSQL V for architecture ARCH (this machine's by default, or
# arm64 on an amd64 machine) as a DBA uses them, on servers that never saw a compiler.
# META.json's version is checked against Cargo.toml's, V's release files are built
# (scripts/package.sh [--arch ARCH] V: the .deb, the tarball, the SQL edition's files,
# SHA256SUMS; or, with RELEASE_FILES_DIR set, taken from there as they are) and checked
# against their checksums, the library against ARCH's ELF machine, then:
# - 15, 17, 18 and 19: in a clean Debian root of ARCH and of the release that packages V
#   (debootstrap --arch=ARCH --variant=minbase; bookworm, trixie, sid, and for
#   experimental a sid root with experimental added: debian_release_of) with Debian's own
#   postgresql-V and no Rust, cargo, clang or C compiler (checked), the .deb is installed
#   with apt-get and its files checked with dpkg; a cluster without preload, started in the
#   root as its postgres user, passes the pg_regress suite (the host's pg_regress and psql
#   of V, over the cluster's socket); one with shared_preload_libraries mints under pgbench,
#   with a new connection per transaction too, each id from a slot taken and given back,
#   and writes its reservation (the high-water mark file); apt-get remove leaves none of
#   the package's files; then the previous release's package (0.3.0, built from its commit
#   by this scripts/package.sh, cached) is installed, ids are minted and recorded with their
#   parts, the server is stopped, this release's package is installed over it and the
#   upgrade done as CHANGELOG.md's 0.4.0 entry says (snowflake.reordered_at, a start, the
#   node claims released, `ALTER EXTENSION snowflake_pg UPDATE`): every recorded id still
#   parses to the same parts, and new ids are greater and in this release's order (amd64,
#   15 to 18 only: the test says that it skips this step elsewhere). The root is made once and cached under
#   /var/lib/snowflake_pg/roots, named by its release, architecture and major
#   (bookworm-arm64-pg15); each run works in an overlay over it, thrown away after, so
#   every run starts from the clean root. The servers it starts there are always stopped
#   and what it mounts always unmounted.
# - 16, which no Debian release has: the tarball's install.sh (which refuses another
#   major's pg_config) installs it into PostgreSQL 16 in place of the source install, and
#   the pg_regress suite runs against it; whatever happens, the source install is put back
#   (install_extension 16) for the steps that follow. For arm64 no PostgreSQL 16 runs here,
#   so its tarball is checked as files only: install.sh refuses this machine's amd64
#   PostgreSQL 16, naming both architectures, and installs into a stand-in arm64 one.
# arm64 on an amd64 machine runs under emulation (scripts/setup-emulation.sh: qemu-user and
# binfmt_misc): only the root's programs, the server among them, are emulated; pg_regress,
# psql and pgbench are this machine's own, over the server's socket, which keeps it fast.
# Every check prints its seconds, the budget of a CI run.
# Usage: bash tests/package.sh MAJOR [ARCH]   (as root; ARCH: this machine's, or arm64)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
pg=${1:?usage: package.sh MAJOR [ARCH]}
pg_major "$pg" >/dev/null
fail() { echo "FAIL package: $*" >&2; exit 1; }
test_began=$EPOCHREALTIME checked=$EPOCHREALTIME
# ok MESSAGE: a check passed, with its seconds (since the check before it).
ok() { echo "ok $* ($(seconds_since "$checked") s)"; checked=$EPOCHREALTIME; }

# The release the packages upgrade from (PREVIOUS_RELEASE, scripts/lib.sh), whose package
# is built here for one architecture. 0.3.0 was built for amd64 and arm64 and 15 to 19;
# its package is built here for the majors of the host (the build root's 19 would cost a
# build of its own in that root).
previous=$PREVIOUS_RELEASE previous_arch=amd64 previous_majors="15 16 17 18"

# The architectures the release files are tested for: this machine's, and arm64 (aarch64)
# on an amd64 machine, emulated. The ELF machine (e_machine) of each one's libraries.
host_arch=$(dpkg --print-architecture)
arch=${2:-$host_arch}
declare -A elf_machines=([amd64]=62 [arm64]=183)
[[ $arch == "$host_arch" || ($host_arch == amd64 && $arch == arm64) ]] ||
  fail "no test of $arch packages on this $host_arch machine (it runs $host_arch's, and arm64's on amd64)"
emulated=false
if [[ $arch != "$host_arch" ]]; then
  emulated=true
  bash "$SNOWFLAKE_PG_ROOT/scripts/setup-emulation.sh" || fail "no $arch emulation here"
fi
# elf_machine FILE: the ELF machine of FILE (bytes 18-19, read in this machine's byte order,
# little-endian as both architectures' files are), or nothing if FILE is no ELF file.
elf_machine() {
  [[ $(od -A n -t x1 -N 4 "$1" 2>/dev/null) == " 7f 45 4c 46" ]] || return 0
  od -A n -t u2 -j 18 -N 2 "$1" | tr -d ' '
}
# Release files and test output of an emulated architecture go in directories of their own.
files_of=pg$pg
$emulated && files_of=$arch-pg$pg

cd "$SNOWFLAKE_PG_ROOT"
version=$(extension_version)

# META.json: valid JSON with the fields PGXN requires, and Cargo.toml's version.
python3 - "$version" <<'EOF' || fail "META.json does not match Cargo.toml (version $version)"
import json, sys
version = sys.argv[1]
meta = json.load(open("META.json"))
required = ("name", "abstract", "version", "maintainer", "license", "provides", "meta-spec")
problems = [f"no {key}" for key in required if key not in meta]
extension = meta.get("provides", {}).get("snowflake_pg", {})
for where, found in (("version", meta.get("version")), ("provides.snowflake_pg.version", extension.get("version"))):
    if found != version:
        problems.append(f"{where} is {found}, Cargo.toml says {version}")
for problem in problems:
    print(f"META.json: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
ok "META.json: version $version, as Cargo.toml"

# V's release files, in a directory of this test's own; or, with RELEASE_FILES_DIR set, the
# ones already there, as they are (built elsewhere, or to be published).
if [[ -n ${RELEASE_FILES_DIR:-} ]]; then
  release_dir=$RELEASE_FILES_DIR
else
  release_dir=$SNOWFLAKE_PG_ROOT/target/release-files-$files_of
  package_args=("$pg")
  $emulated && package_args=(--arch "$arch" "$pg")
  RELEASE_FILES_DIR=$release_dir bash scripts/package.sh "${package_args[@]}" >/dev/null ||
    fail "scripts/package.sh ${package_args[*]} failed"
fi
package=postgresql-$pg-snowflake-pg
deb=$release_dir/${package}_$version-1_$arch.deb
tarball=$release_dir/snowflake_pg-$version-pg$pg-$arch-linux-gnu.tar.gz
[[ -f $deb && -f $tarball ]] || fail "$release_dir holds no $(basename "$deb") or $(basename "$tarball"): $(ls "$release_dir")"
shopt -s nullglob
sql_edition=("$release_dir"/snowflake_sql--*.sql)
((${#sql_edition[@]} == 2)) || fail "the SQL edition's release files are not two: ${sql_edition[*]##*/}"
(cd "$release_dir" && sha256sum --check --quiet SHA256SUMS) || fail "the release files do not match SHA256SUMS"
(($(wc -l <"$release_dir/SHA256SUMS") == 4)) || fail "SHA256SUMS does not cover the 4 release files: $(cat "$release_dir/SHA256SUMS")"
[[ $(dpkg-deb -f "$deb" Package) == "$package" && $(dpkg-deb -f "$deb" Version) == "$version-1" &&
  $(dpkg-deb -f "$deb" Architecture) == "$arch" && $(dpkg-deb -f "$deb" Depends) == "postgresql-$pg" ]] ||
  fail "$(basename "$deb"): package $(dpkg-deb -f "$deb" Package), version $(dpkg-deb -f "$deb" Version), architecture $(dpkg-deb -f "$deb" Architecture), depends on $(dpkg-deb -f "$deb" Depends)"

# The extension's files, as named in the server's directories: the library, the control
# file, this version's install script, every install and upgrade script of the repository.
extension_files=(snowflake_pg.control "snowflake_pg--$version.sql")
for script in $(extension_scripts); do
  [[ $(basename "$script") == "snowflake_pg--$version.sql" ]] || extension_files+=("$(basename "$script")")
done
shopt -u nullglob
# The tarball: the package's library, the same extension files, its install script.
unpacked=$release_dir.unpacked
rm -rf "$unpacked" && mkdir -p "$unpacked"
# Unpacked without a word from tar: a DBA's tar warns of no implausible time stamp (files
# dated before 1970, as a build without the source's commit date makes them).
warnings=$(tar -xzf "$tarball" -C "$unpacked" 2>&1) || fail "tar -xzf $(basename "$tarball") failed: $warnings"
[[ -z $warnings ]] || fail "tar -xzf $(basename "$tarball") warns: $(head -n 3 <<<"$warnings")"
top=$unpacked/$(basename "$tarball" .tar.gz)
for file in install.sh lib/snowflake_pg.so "${extension_files[@]/#/extension/}"; do
  [[ -f $top/$file && ! -L $top/$file ]] || fail "$(basename "$tarball") holds no file $file"
done
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/lib/postgresql/$pg/lib/snowflake_pg.so" | cmp -s - "$top/lib/snowflake_pg.so" ||
  fail "the library of $(basename "$tarball") is not that of $(basename "$deb")"
machine=$(elf_machine "$top/lib/snowflake_pg.so")
[[ $machine == "${elf_machines[$arch]}" ]] ||
  fail "the library of $(basename "$tarball") is not an $arch ELF file (e_machine ${elf_machines[$arch]}): e_machine ${machine:-(none, no ELF file)}"
ok "release files of PostgreSQL $pg on $arch: $(basename "$deb") ($(du -k "$deb" | cut -f1) kB), $(basename "$tarball") ($(du -k "$tarball" | cut -f1) kB), ${sql_edition[*]##*/}; sha256sum -c SHA256SUMS passes; the library an $arch ELF file (e_machine $machine)"

# --- 16 on arm64: the tarball's files, checked as files -----------------------------------
# No arm64 PostgreSQL 16 runs here. install.sh must refuse this machine's (amd64), naming
# both architectures, before it touches it (if not, the source install is put back), and
# install into a stand-in arm64 PostgreSQL 16: a pg_config that names directories of this
# test's own, and, as its server, an aarch64 ELF file (the library itself).
if [[ -z $(debian_release_of "$pg") ]] && $emulated; then
  pg_config=$(pg_config_of "$pg")
  if refusal=$(sh "$top/install.sh" "$pg_config" 2>&1); then
    install_extension "$pg" || echo "FAIL package: could not restore the source install" >&2
    fail "install.sh of the $arch tarball installed into this machine's $host_arch PostgreSQL $pg"
  fi
  [[ $refusal == *"PostgreSQL $pg on $arch ("*"PostgreSQL $pg on $host_arch ("* ]] ||
    fail "install.sh refused this machine's PostgreSQL $pg, but does not say it is of $host_arch and the files of $arch: $refusal"
  stand_in=$unpacked/stand-in-pg$pg
  mkdir -p "$stand_in/bin" && cp "$top/lib/snowflake_pg.so" "$stand_in/bin/postgres"
  cat >"$stand_in/bin/pg_config" <<STAND_IN
#!/bin/sh
case \$1 in
  --version) echo 'PostgreSQL $pg.0' ;;
  --bindir) echo '$stand_in/bin' ;;
  --pkglibdir) echo '$stand_in/lib' ;;
  --sharedir) echo '$stand_in/share' ;;
esac
STAND_IN
  chmod 755 "$stand_in/bin/pg_config"
  sh "$top/install.sh" "$stand_in/bin/pg_config" >/dev/null || fail "install.sh refused a stand-in $arch PostgreSQL $pg"
  cmp -s "$top/lib/snowflake_pg.so" "$stand_in/lib/snowflake_pg.so" || fail "install.sh did not put the library into the stand-in's lib"
  for file in "${extension_files[@]}"; do
    cmp -s "$top/extension/$file" "$stand_in/share/extension/$file" || fail "install.sh did not put $file into the stand-in's share/extension"
  done
  ok "the $arch tarball, as files (no $arch PostgreSQL $pg runs here): its install.sh refused this machine's PostgreSQL $pg ($refusal) and installed the library and ${#extension_files[@]} extension files into a stand-in $arch PostgreSQL $pg"
  echo "ok package test of PostgreSQL $pg on $arch ($(seconds_since "$test_began") s)"
  exit 0
fi

# --- 16: the tarball, into the wheel's server --------------------------------------------
if [[ -z $(debian_release_of "$pg") ]]; then
  pg_config=$(pg_config_of "$pg")
  libdir=$("$pg_config" --pkglibdir) extdir=$("$pg_config" --sharedir)/extension
  # Put the source install back, however the test ends; a signal now would stop it halfway.
  # shellcheck disable=SC2317 # run by the trap
  restore() {
    local code=$?
    trap - EXIT
    trap '' INT TERM
    install_extension "$pg" || { echo "FAIL package: could not restore the source install" >&2; code=1; }
    exit "$code"
  }
  trap restore EXIT
  trap 'exit 130' INT TERM
  rm -f "$libdir/snowflake_pg.so" "$extdir/snowflake_pg.control" "$extdir"/snowflake_pg--*.sql
  other=$(for v in "${PG_VERSIONS[@]}"; do [[ $v == "$pg" ]] || { echo "$v"; break; }; done)
  if sh "$top/install.sh" "$(pg_config_of "$other")" >/dev/null 2>&1; then
    fail "install.sh of PostgreSQL $pg installed into PostgreSQL $other"
  fi
  sh "$top/install.sh" "$pg_config" || fail "install.sh $pg_config failed"
  cmp -s "$top/lib/snowflake_pg.so" "$libdir/snowflake_pg.so" || fail "install.sh did not put the library into $libdir"
  for file in "${extension_files[@]}"; do
    cmp -s "$top/extension/$file" "$extdir/$file" || fail "install.sh did not put $file into $extdir"
  done
  ok "the tarball's install.sh refused PostgreSQL $other's pg_config and installed the library and ${#extension_files[@]} extension files into PostgreSQL $pg"
  bash tests/regress.sh "$pg" || fail "the pg_regress suite failed against the tarball's install"
  ok "pg_regress suite passed against the tarball's install"
  echo "ok package test of PostgreSQL $pg ($(seconds_since "$test_began") s)"
  exit 0
fi

# --- 15, 17, 18, 19: a clean Debian root ------------------------------------------------
release=$(debian_release_of "$pg")
# Debian's postgresql-V, from the release's own suite; experimental is no whole release, but
# packages over sid, from which only the server, its client and libpq come (apt-get -t
# experimental would take experimental's perl too, which does not install there).
server_packages=("postgresql-$pg")
if [[ $release == experimental ]]; then
  server_packages=("postgresql-$pg/experimental" "postgresql-client-$pg/experimental" libpq5/experimental)
fi
roots=/var/lib/snowflake_pg/roots
clean=$roots/$release-$arch-pg$pg run=$roots/run-$arch-pg$pg
root=$run/root
mounts=() started=()
# The root's own programs, with nothing of this machine's environment (in_chroot: but the
# emulated CPU, in an arm64 root).
in_root() { in_chroot "$root" "$@"; }
as_root_postgres() { in_root runuser -u postgres -- "$@"; }
apt_in_root() {
  in_root env DEBIAN_FRONTEND=noninteractive apt-get -y -q "$@" >"$run/apt.log" 2>&1 ||
    { cat "$run/apt.log" >&2; return 1; }
}
# Stops the servers started in the root, then unmounts what was mounted (root_unmount).
cleanup() {
  local code=$? i
  trap - EXIT
  trap '' INT TERM
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do
    [[ ! -f $root${started[i]}/data/postmaster.pid ]] ||
      as_root_postgres "/usr/lib/postgresql/$pg/bin/pg_ctl" -D "${started[i]}/data" -m fast -w stop >/dev/null || code=1
  done
  root_unmount "$root" "${mounts[@]}" || code=1
  # A failed run's overlay stays for a look (the clusters' logs), until the next run.
  if ((code == 0)); then rm -rf --one-file-system "$run"; fi
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mount_at() { # mount_at DIR MOUNT-ARGS...: mounts on DIR, to be unmounted by cleanup
  local dir=$1; shift
  mkdir -p "$dir" && mount "$@" "$dir" && mounts+=("$dir")
}

# The clean root, made once (debian_root_make): debootstrap's minimal Debian of ARCH (its
# programs emulated where ARCH is not this machine's), then Debian's postgresql-V.
if [[ ! -d $clean ]]; then
  times=$(debian_root_make "$clean" "$arch" "$release" "${server_packages[@]}") ||
    fail "making the clean $release $arch root with Debian's postgresql-$pg failed"
  ok "made the clean $release $arch root with Debian's postgresql-$pg in $roots ($times, $(du -sm "$clean" | cut -f1) MB)"
fi
root_overlay "$clean" "$run" || fail "no overlay over the clean root $clean"
mount_at "$root/dev/shm" -t tmpfs tmpfs
server_version=$(in_root dpkg-query -W -f="\${Version}" "postgresql-$pg")
root_arch=$(in_root dpkg --print-architecture)
[[ $root_arch == "$arch" ]] || fail "the $release root of $arch is of $root_arch"
compilers=$(in_root sh -c "for tool in rustc cargo rustup clang gcc cc c++ g++ ld; do command -v \$tool || true; done")
[[ -z $compilers ]] || fail "the $release root has compilers: $compilers"
ok "the $release $arch root$(if $emulated; then echo " (emulated)"; fi): Debian's postgresql-$pg $server_version; no rustc, cargo, clang, gcc, cc or ld"

# The clusters in the root, run by its postgres user, each in /var/tmp/snowflake_pg/NAME
# there; lib.sh's sql and pgbench_run reach them through that directory seen from here.
CLUSTERS_DIR=$root/var/tmp/snowflake_pg
root_cluster_start() { # NAME PORT [setting=value ...]
  local dir=/var/tmp/snowflake_pg/$1 port=$2 setting opts; shift 2
  opts="-k $dir -p $port -c listen_addresses=''"
  for setting in "$@"; do opts+=" -c $setting"; done
  in_root install -d -o postgres -g postgres "$dir"
  as_root_postgres "/usr/lib/postgresql/$pg/bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$root$dir/initdb.log" 2>&1 ||
    { cat "$root$dir/initdb.log"; return 1; }
  started+=("$dir")
  as_root_postgres "/usr/lib/postgresql/$pg/bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -w start >/dev/null ||
    { cat "$root$dir/server.log"; return 1; }
}
# root_cluster_restart NAME / root_cluster_stop NAME: the server of cluster NAME, restarted
# or stopped, its log without an internal error (XX000) so far.
root_cluster_restart() {
  as_root_postgres "/usr/lib/postgresql/$pg/bin/pg_ctl" -D "/var/tmp/snowflake_pg/$1/data" -m fast -w "${2:-restart}" >/dev/null
  ! grep -E "$INTERNAL_ERROR_RE" "$CLUSTERS_DIR/$1/server.log" || fail "an internal error in the log of $1"
}
root_cluster_stop() { root_cluster_restart "$1" stop; }

# The package, installed with apt-get from the file, as a DBA does.
libdir=/usr/lib/postgresql/$pg/lib extdir=/usr/share/postgresql/$pg/extension
expected=("$libdir/snowflake_pg.so" "/usr/share/doc/$package/copyright")
for file in "${extension_files[@]}"; do expected+=("$extdir/$file"); done
cp "$deb" "$root/tmp/"
apt_in_root install "/tmp/$(basename "$deb")" || fail "apt-get install ./$(basename "$deb") failed in the $release root"
listed=$(in_root dpkg -L "$package")
for file in "${expected[@]}"; do
  grep -qxF "$file" <<<"$listed" || fail "dpkg -L $package does not list $file"
  [[ -f $root$file ]] || fail "$file is listed but not installed"
done
in_root dpkg --verify "$package" || fail "the installed files of $package differ from the package's checksums"
machine=$(elf_machine "$root$libdir/snowflake_pg.so")
[[ $machine == "${elf_machines[$arch]}" ]] || fail "the installed $libdir/snowflake_pg.so is not an $arch ELF file: e_machine ${machine:-(none)}"
ok "apt-get installed $(basename "$deb"): dpkg -L lists all ${#expected[@]} files, checksums verified, the library an $arch ELF file"

# A stock server: the pg_regress suite, invoked as tests/regress.sh does: the tests that
# create the extension first, the others after. Emulated, but the test that minting runs
# ahead of the clock, which needs a server faster than an emulated one (its comment).
root_cluster_start stock $((6600 + pg))
tests=() users=() left_out=()
$emulated && left_out=(lead)
for file in tests/regress/sql/*.sql; do
  name=$(basename "$file" .sql)
  if [[ " ${left_out[*]} " == *" $name "* ]]; then continue; fi
  if grep -qi '^CREATE EXTENSION snowflake_pg' "$file"; then tests+=("$name"); else users+=("$name"); fi
done
out=$SNOWFLAKE_PG_ROOT/target/regress-package-$files_of
rm -rf "$out" && mkdir -p "$out"
"$(dirname "$("$(pg_config_of "$pg")" --pgxs)")/../test/regress/pg_regress" --bindir="$(pg_bin_of "$pg")" \
  --host="$CLUSTERS_DIR/stock" --port=$((6600 + pg)) --user=postgres --inputdir=tests/regress \
  --outputdir="$out" --dbname=snowflake_regress "${tests[@]}" "${users[@]}" >"$out/pg_regress.log" 2>&1 ||
  { cat "$out/pg_regress.log" "$out/regression.diffs" 2>/dev/null; fail "the pg_regress suite failed against the package in the $release root"; }
root_cluster_stop stock
ok "pg_regress suite ($((${#tests[@]} + ${#users[@]})) tests${left_out[*]:+, but ${left_out[*]}}) passed against the package on the root's PostgreSQL $pg, not preloaded"

# A preloading server minting under pgbench: 8 clients, then a new connection for every
# transaction, so that slots are taken and given back all the time: afterwards no backend
# holds a slot, and at most 16 held one at once (a new connection may take a slot before
# the backend it follows has exited and given its own back). Every id is within the
# reservation (the high-water mark, the last tick any backend may mint in, at or above the
# last id's), which is written to its file: a check that holds however slowly the server
# runs, where the mark's lead on the clock (a second at a renewal) does not. Emulated, every new connection's backend starts slowly:
# fewer transactions, still 8 clients and a run with -C.
clients=8 transactions=100
$emulated && transactions=25
root_cluster_start preload $((6620 + pg)) shared_preload_libraries=snowflake_pg
sql preload "CREATE EXTENSION snowflake_pg" -c "CREATE TABLE minted (id bigint PRIMARY KEY DEFAULT snowflake_next(), client int NOT NULL)"
echo "INSERT INTO minted (client) SELECT :client_id FROM generate_series(1, 10);" >"$CLUSTERS_DIR/preload/insert.sql"
for connect in "" -C; do
  read -r _ _ failed <<<"$(pgbench_run preload -c "$clients" -j 2 -t "$transactions" $connect -f "$CLUSTERS_DIR/preload/insert.sql")" ||
    fail "pgbench $connect failed on the preloading server"
  ((failed == 0)) || fail "pgbench $connect: $failed failed transactions"
done
rows=$(sql preload "SELECT count(*) FROM minted")
((rows == 2 * clients * transactions * 10)) || fail "$rows ids minted, not $((2 * clients * transactions * 10))"
for ((i = 0; i < 100; i++)); do
  [[ $(sql preload "SELECT backends_minting FROM snowflake_status") == 0 ]] && break
  sleep 0.05
done
status=$(sql preload "SELECT concat_ws(' ', preloaded, backends_minting, most_backends_minting,
  high_water_mark >= (SELECT max((snowflake_parse(id)).ts) FROM minted),
  (SELECT count(DISTINCT (snowflake_parse(id)).backend_slot) FROM minted))
  FROM snowflake_status")
read -r preloaded minting most covered slots <<<"$status"
if ! [[ $preloaded == t && $minting == 0 && $covered == t ]] || ((most < 2 || most > 2 * clients)); then
  fail "snowflake_status after pgbench (preloaded, backends_minting, most_backends_minting, every id within the reservation, slots used): $status"
fi
mark=$CLUSTERS_DIR/preload/data/pg_snowflake/high_water_mark
[[ -s $mark ]] || fail "no reservation written to $mark"
root_cluster_stop preload
[[ -s $mark ]] || fail "the high-water mark file is gone after a clean stop"
ok "preloading server: $rows ids from $((2 * clients * transactions)) transactions of $clients clients (the last $((clients * transactions)) each on a new connection), 0 failed, 0 duplicates; slots taken and given back (at most $most held at once, $slots slots used in turn, 0 held after), every id within the reservation, which is written"

apt_in_root remove "$package" || fail "apt-get remove $package failed"
for file in "${expected[@]}"; do [[ ! -e $root$file ]] || fail "$file is left after apt-get remove $package"; done
! in_root dpkg-query -W -f="\${Status}" "$package" 2>/dev/null | grep -qv not-installed ||
  fail "dpkg still knows $package after apt-get remove: $(in_root dpkg-query -W -f="\${Status}" "$package")"
ok "apt-get remove $package: none of its files left"

# The previous release was built for amd64 and 15 to 18 only: elsewhere there is nothing
# to upgrade from.
if [[ $arch != "$previous_arch" || " $previous_majors " != *" $pg "* ]]; then
  echo "skip the upgrade from $previous's package: $previous was built for PostgreSQL $previous_majors on $previous_arch only"
  echo "ok package test of PostgreSQL $pg on $arch in the $release root ($(seconds_since "$test_began") s)"
  exit 0
fi

# The previous release's package, built once from its tree (release_tree) by
# scripts/package.sh, in the target directory that every build shares (stage_extension):
# with the same dependencies as this release's, it compiles its own crates alone.
commit=$(release_commit "$previous" "$PREVIOUS_RELEASE_COMMIT") || fail "no commit of $previous"
old_tree=$(release_tree "$previous" "$PREVIOUS_RELEASE_COMMIT") || fail "no tree of $previous"
old=$(dirname "$old_tree")
old_deb=$old/pg$pg/${package}_$previous-1_$arch.deb
if [[ ! -f $old_deb ]]; then
  RELEASE_FILES_DIR=$old/pg$pg bash scripts/package.sh --source "$old_tree" "$pg" >/dev/null ||
    fail "scripts/package.sh could not package $previous for PostgreSQL $pg"
fi
cp "$old_deb" "$root/tmp/"
apt_in_root install "/tmp/$(basename "$old_deb")" || fail "apt-get install ./$(basename "$old_deb") failed"
root_cluster_start upgrade $((6640 + pg)) shared_preload_libraries=snowflake_pg
sql upgrade "CREATE EXTENSION snowflake_pg" \
  -c "CREATE TABLE before AS SELECT id, to_jsonb(snowflake_parse(id)) AS parts FROM (SELECT snowflake_next() AS id FROM generate_series(1, 1000)) ids"
[[ $(sql upgrade "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'") == "$previous" ]] ||
  fail "the $previous package made version $(sql upgrade "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'")"
# As CHANGELOG.md's 0.4.0 entry says: the server stopped before the new library is
# installed, snowflake.reordered_at set to a time after the stop, started, the node claims
# released before the first id, the extension updated.
root_cluster_stop upgrade
apt_in_root install "/tmp/$(basename "$deb")" || fail "apt-get install ./$(basename "$deb") over $previous failed"
[[ $(in_root dpkg-query -W -f="\${Version}" "$package") == "$version-1" ]] || fail "$package is not $version-1 after the upgrade"
reordered_at=$(date -u '+%Y-%m-%d %H:%M:%S.%6N+00')
echo "snowflake.reordered_at = '$reordered_at'" >>"$root/var/tmp/snowflake_pg/upgrade/data/postgresql.conf"
root_cluster_restart upgrade 2>/dev/null # no server to stop: it starts with its last options
sql upgrade "SELECT snowflake_release_node(node_id) FROM snowflake_nodes" -c "ALTER EXTENSION snowflake_pg UPDATE"
check=$(sql upgrade "SELECT concat_ws(' ', (SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'),
  (SELECT count(*) FROM before WHERE NOT parts <@ to_jsonb(snowflake_parse(id))),
  (SELECT count(*) FROM before WHERE parts <@ to_jsonb(snowflake_parse(id, 'default'))) < 100,
  (SELECT min(snowflake_next()) > (SELECT max(id) FROM before) FROM generate_series(1, 1000)),
  (SELECT bool_and(p.ts >= '$reordered_at' AND p.sequence = (snowflake_parse(id, 'default')).sequence)
     FROM (SELECT snowflake_next() AS id FROM generate_series(1, 1000)) ids, LATERAL snowflake_parse(id) p))")
[[ $check == "$version 0 t t t" ]] ||
  fail "after the update (version, old ids that parse otherwise than before, few read alike in $version's order, new ids greater, new ids in $version's order after reordered_at): $check, not '$version 0 t t t'"
root_cluster_stop upgrade
ok "upgraded from $previous's package (built from $commit): stopped, apt-get install over it, snowflake.reordered_at set, started, claims released, ALTER EXTENSION UPDATE to $version; 1000 ids minted before parse to the same parts (in $version's own order they would not), 1000 minted after are greater and in $version's order"
echo "ok package test of PostgreSQL $pg on $arch in the $release root ($(seconds_since "$test_began") s)"
