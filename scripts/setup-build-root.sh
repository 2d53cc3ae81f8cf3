#!/usr/bin/env bash
# Makes the Debian sid build root of scripts/build-root.sh, as root, skipping what is
# already there (quick then): PostgreSQL 19 from Debian experimental (which needs sid's
# glibc, so it runs in no other place here) with its server headers, sid's Rust with the
# arm64 std and the aarch64 cross toolchain, cargo-pgrx told of 19, and, for cross-
# compiling the extension for arm64, the arm64 server headers of every major 15 to 19 in
# /opt/arm64/pgN/include/server of the root with the pg_config answers pgrx asks for in
# /opt/arm64/pgN/pg_config.env (see arm64_headers).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"
# shellcheck source=scripts/build-root.sh
source "$here/build-root.sh"

say() { printf '== setup-build-root: %s\n' "$*"; }

root=$(build_root_dir)
mirror=$(debian_mirror)

# The root itself, made in $root.new and renamed when it is whole, so that a root that is
# there is complete. Debian experimental is a source beside sid, pinned low so that only
# what is named PACKAGE/experimental comes from it; arm64 is a foreign architecture (the
# Rust std for aarch64 is libstd-rust-dev:arm64). No service starts in it, and the
# archive's Release files may be older than their Valid-Until. The host's postgres user
# and group are made in it with the same ids, so that clusters made on either side are
# owned by the postgres of both.
if [[ ! -d $root ]]; then
  apt_install_missing debootstrap >/dev/null
  say "debootstrap sid into $root"
  rm -rf "$root.new"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase sid "$root.new" "$mirror" >"$root.new.log" 2>&1 ||
    { tail -n 20 "$root.new.log"; exit 1; }
  printf '#!/bin/sh\nexit 101\n' >"$root.new/usr/sbin/policy-rc.d"
  chmod 755 "$root.new/usr/sbin/policy-rc.d"
  echo 'Acquire::Check-Valid-Until "false";' >"$root.new/etc/apt/apt.conf.d/99snowflake_pg"
  echo "deb $mirror experimental main" >"$root.new/etc/apt/sources.list.d/experimental.list"
  printf 'Package: *\nPin: release a=experimental\nPin-Priority: 1\n' \
    >"$root.new/etc/apt/preferences.d/experimental"
  chroot "$root.new" dpkg --add-architecture arm64
  # Debian's postgresql-common makes no cluster "main" when told so before it installs.
  mkdir -p "$root.new/etc/postgresql-common"
  echo 'create_main_cluster = false' >"$root.new/etc/postgresql-common/createcluster.conf"
  if getent passwd postgres >/dev/null; then
    chroot "$root.new" groupadd --system -g "$(id -g postgres)" postgres
    chroot "$root.new" useradd --system -u "$(id -u postgres)" -g postgres -d /var/lib/postgresql \
      -s /bin/bash -c "PostgreSQL administrator" postgres
  fi
  rm -f "$root.new.log"
  mv "$root.new" "$root"
fi
# The mark by which lib.sh's in_build_root_now knows it runs in the root.
[[ -f $root/etc/snowflake_pg-build-root ]] ||
  echo "the build root of snowflake_pg (scripts/setup-build-root.sh)" >"$root/etc/snowflake_pg-build-root"

# root_install PACKAGE...: installs into the root those of the packages (NAME,
# NAME:ARCH or NAME/experimental) not installed there yet.
root_install() {
  local package missing=()
  for package in "$@"; do
    dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status}' "${package%/*}" 2>/dev/null |
      grep -q "install ok installed" || missing+=("$package")
  done
  ((${#missing[@]})) || return 0
  say "apt-get install ${missing[*]}"
  in_build_root sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends \
    -o Dpkg::Options::=--force-confold "$@" && apt-get clean' sh "${missing[@]}" \
    >"$root.apt.log" 2>&1 || { tail -n 30 "$root.apt.log"; return 1; }
  rm -f "$root.apt.log"
}

# sid's Rust (the arm64 std of the same version), the aarch64 C cross compiler and
# linker with sid's arm64 glibc to link against (libc6-dev:arm64, whose libc6:arm64 the
# arm64 std brings anyway; the cross compiler alone finds no crti.o), what pgrx builds
# with (rustfmt too, which pgrx-pg-sys runs on its bindings), ICU's headers, which
# Debian's server headers of every major include (built --with-icu) and Debian's
# postgresql-server-dev-19 does not bring; sudo for `cargo pgrx test --runas`, procps for
# the tests' process checks, clippy for the lint of 19's build (scripts/lib.sh, linted),
# libfaketime for the SQL edition's test and the reliability scenarios' faked clocks,
# pgbouncer for the SQL edition's test, debootstrap for 19's package test (its clean roots
# are made in this one), git for the date of the tarballs' files; for 19's reliability
# scenarios and its operations test, what they need on the host: Node.js (11-layouts reads
# ids as JSON numbers with it), Debian's prometheus-postgres-exporter and promtool (sid
# packages it apart from prometheus), curl and python3-yaml.
root_install rustc cargo libstd-rust-dev:arm64 gcc-aarch64-linux-gnu libc6-dev:arm64 clang \
  libclang-dev rustfmt rust-clippy libicu-dev pkg-config libssl-dev make sudo ca-certificates procps file \
  libfaketime pgbouncer debootstrap git nodejs prometheus-postgres-exporter promtool curl python3-yaml
# PostgreSQL 19 from experimental, named PACKAGE/experimental: `-t experimental` would
# take experimental's perl and more with it.
root_install postgresql-19/experimental postgresql-client-19/experimental libpq5/experimental \
  postgresql-server-dev-19/experimental

# The host's cargo-pgrx (scripts/setup.sh installs it, of the pgrx the extension uses),
# built on Debian 12: the libraries it links, libc and libssl3, are in sid too, so it runs
# in the root; told of PostgreSQL 19 there (in the .pgrx of the root's home directory).
cargo_pgrx=$(command -v cargo-pgrx) ||
  { echo "no cargo-pgrx on this machine: run scripts/setup.sh first" >&2; exit 1; }
[[ $("$cargo_pgrx" pgrx --version) == "cargo-pgrx $PGRX_VERSION" ]] ||
  { echo "$cargo_pgrx is not cargo-pgrx $PGRX_VERSION: run scripts/setup.sh first" >&2; exit 1; }
if ! cmp -s "$cargo_pgrx" "$root/usr/local/bin/cargo-pgrx"; then
  say "cargo-pgrx from $cargo_pgrx"
  install -m 755 "$cargo_pgrx" "$root/usr/local/bin/cargo-pgrx"
fi
pg19_config=/usr/lib/postgresql/19/bin/pg_config
if ! grep -qxF "pg19 = \"$pg19_config\"" "$root/root/.pgrx/config.toml" 2>/dev/null; then
  say "cargo pgrx init --pg19 $pg19_config"
  in_build_root cargo pgrx init --pg19 "$pg19_config"
fi

# --- The arm64 server headers of each major ---------------------------------------------

# debian_fetch DIR SUITE ARCH PACKAGE...: the Debian packages of release SUITE for
# architecture ARCH unpacked into DIR/root (dpkg -x, not installed), through an apt
# configuration of its own in DIR (the host's sources, lists and cache are untouched),
# the archive's Release files taken even when older than their Valid-Until.
debian_fetch() {
  local dir=$1 suite=$2 arch=$3 deb; shift 3
  mkdir -p "$dir/sources.list.d" "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/deb"
  printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' "$mirror" "$suite" \
    /usr/share/keyrings/debian-archive-keyring.gpg >"$dir/sources.list.d/$suite.sources"
  local apt=(apt-get -q -o Dir::Etc::SourceList=/dev/null
    -o "Dir::Etc::SourceParts=$dir/sources.list.d" -o "Dir::State::Lists=$dir/lists"
    -o "Dir::Cache=$dir/cache" -o APT::Sandbox::User=root -o "APT::Architecture=$arch"
    -o "APT::Architectures=$arch" -o Acquire::Check-Valid-Until=false
    -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false)
  ("${apt[@]}" update && cd "$dir/deb" && "${apt[@]}" download "$@") >"$dir.log" 2>&1 ||
    { cat "$dir.log" >&2; return 1; }
  for deb in "$dir"/deb/*.deb; do dpkg -x "$deb" "$dir/root"; done
}

# pg_config_env V COMMAND...: the pg_config.env of the arm64 headers of V: the answers
# that pgrx-pg-sys asks pg_config for, as the environment it reads them from when
# PGRX_PG_CONFIG_AS_ENV is true, one VAR=value a line (for `mapfile -t vars <FILE` and
# `env "${vars[@]}" cargo ...`). The version and the compiler's flags and configure
# arguments (whose CLANG pgrx's bindgen prefers) are those of COMMAND, a pg_config (or
# qemu running one); the directories are those of the root's headers and of Debian's
# layout for V on arm64 (pgrx needs LIBDIR too: a link search path).
pg_config_env() {
  local v=$1 what; shift
  echo PGRX_PG_CONFIG_AS_ENV=true
  for what in version cppflags cflags configure; do
    echo "PGRX_PG_CONFIG_${what^^}=$("$@" "--$what")"
  done
  echo "PGRX_PG_CONFIG_INCLUDEDIR-SERVER=/opt/arm64/pg$v/include/server"
  echo "PGRX_PG_CONFIG_PKGINCLUDEDIR=/opt/arm64/pg$v/include"
  echo "PGRX_PG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu"
  echo "PGRX_PG_CONFIG_PKGLIBDIR=/usr/lib/postgresql/$v/lib"
  echo "PGRX_PG_CONFIG_SHAREDIR=/usr/share/postgresql/$v"
}

# arm64_headers V SUITE: the server headers of Debian SUITE's postgresql-server-dev-V for
# arm64 into the root's /opt/arm64/pgV/include/server, with their pg_config.env (written
# last: a directory that has it is whole), whose answers are those of the arm64 pg_config
# of postgresql-client-V of the same release, run under qemu's user emulation (the host
# release's qemu-user-static, unpacked and not installed; -L: the root's arm64 glibc).
arm64_headers() {
  local v=$1 suite=$2 dest=$root/opt/arm64/pg$1 qemu=$work/qemu/root/usr/bin/qemu-aarch64-static
  say "PostgreSQL $v arm64 server headers from Debian $suite"
  [[ -x $qemu ]] || debian_fetch "$work/qemu" "$(. /etc/os-release && echo "$VERSION_CODENAME")" \
    amd64 qemu-user-static
  debian_fetch "$work/pg$v" "$suite" arm64 "postgresql-server-dev-$v" "postgresql-client-$v"
  rm -rf "$dest" && mkdir -p "$dest/include"
  cp -a "$work/pg$v/root/usr/include/postgresql/$v/server" "$dest/include/server"
  echo "postgresql-server-dev-$v $(dpkg-deb -f "$work/pg$v"/deb/postgresql-server-dev-*.deb Version)" \
    "arm64 of Debian $suite" >"$dest/origin.txt"
  pg_config_env "$v" "$qemu" -L "$root" "$work/pg$v/root/usr/lib/postgresql/$v/bin/pg_config" \
    >"$dest/pg_config.env.new"
  mv "$dest/pg_config.env.new" "$dest/pg_config.env"
}

# arm64_headers_16: 16, which no Debian release has: the server headers of the x86_64
# build of the pgserver wheel (16.2, which scripts/setup-tests.sh installs) made arm64's.
# Between Debian 17's amd64 and arm64 server headers (17.12, trixie) only pg_config.h
# differs, and in it, besides CONFIGURE_ARGS and PG_VERSION_STR ("on x86_64-pc-linux-gnu"
# against "on aarch64-unknown-linux-gnu"), only what the CPU offers: amd64 defines
# HAVE_X86_64_POPCNTQ, HAVE_XSAVE_INTRINSICS, HAVE__GET_CPUID, HAVE__GET_CPUID_COUNT,
# USE_AVX512_POPCNT_WITH_RUNTIME_CHECK and USE_SSE42_CRC32C_WITH_RUNTIME_CHECK, arm64
# USE_ARMV8_CRC32C_WITH_RUNTIME_CHECK instead. The same is done to 16.2's pg_config.h
# (which has some of them only). Its pg_config answers are the wheel's.
arm64_headers_16() {
  local dest=$root/opt/arm64/pg16 header
  if [[ ! -x $PG16_HOME/bin/pg_config ]]; then
    say "no PostgreSQL 16 in $PG16_HOME (scripts/setup-tests.sh installs it): no arm64 headers of 16 yet"
    return 0
  fi
  say "PostgreSQL 16 arm64 server headers from $PG16_HOME's"
  rm -rf "$dest" && mkdir -p "$dest/include"
  cp -a "$("$PG16_HOME/bin/pg_config" --includedir-server)" "$dest/include/server"
  header=$dest/include/server/pg_config.h
  sed -i -E \
    -e 's,^#define (HAVE_X86_64_POPCNTQ|HAVE_XSAVE_INTRINSICS|HAVE__GET_CPUID(_COUNT)?) 1$,/* #undef \1 */,' \
    -e 's,^#define (USE_(AVX512_POPCNT|SSE42_CRC32C)_WITH_RUNTIME_CHECK) 1$,/* #undef \1 */,' \
    -e 's,^/\* #undef (USE_ARMV8_CRC32C_WITH_RUNTIME_CHECK) \*/$,#define \1 1,' \
    -e '/^#define PG_VERSION_STR /s/ on x86_64-pc-linux-gnu,/ on aarch64-unknown-linux-gnu,/' "$header"
  grep -qx '#define USE_ARMV8_CRC32C_WITH_RUNTIME_CHECK 1' "$header" ||
    { echo "$header: not made arm64's" >&2; return 1; }
  echo "$("$PG16_HOME/bin/pg_config" --version) of the pgserver wheel (x86_64), pg_config.h made arm64's" \
    >"$dest/origin.txt"
  pg_config_env 16 "$PG16_HOME/bin/pg_config" >"$dest/pg_config.env.new"
  mv "$dest/pg_config.env.new" "$dest/pg_config.env"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for v in 15 16 17 18 19; do
  [[ ! -f $root/opt/arm64/pg$v/pg_config.env ]] || continue
  case $v in
    16) arm64_headers_16 ;;
    *) arm64_headers "$v" "$(debian_release_of "$v")" ;;
  esac
done

# The crates of Cargo.lock, fetched here: the root's cargo is offline (scripts/build-root.sh).
(cd "$SNOWFLAKE_PG_ROOT" && cargo fetch --locked --quiet)
