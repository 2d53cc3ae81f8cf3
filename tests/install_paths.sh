#!/usr/bin/env bash
# The install and upgrade paths of the docs, followed as a DBA follows them, in clean
# Debian roots (debian_root_make's, through overlays thrown away after; as root):
#
# releases: in the package test's clean Debian 12 root (no compiler, no snowflake_pg), with
#   the PostgreSQL 17 and 18 builds of this machine (the wheels of scripts/setup-tests.sh:
#   servers no Debian package fits, each mounted there as an overlay, so nothing of this
#   machine's changes) and their own programs:
#   1. the tarball (README, "Install"; docs/packaging.md, "The tarball"): this release's
#      tarballs of 17 and 18 (the package steps' release files, or RELEASE_FILES_DIR17 and
#      RELEASE_FILES_DIR18), unpacked and installed by the README's command, `tar -xzf ... &&
#      sh .../install.sh PG_CONFIG`, into servers whose own snowflake_pg files are removed
#      first; every file then the tarball's;
#   2. a major upgrade with pg_upgrade, 17 to 18 (docs/operations.md, "Upgrading", "A new
#      PostgreSQL major"): a 17 server preloading the library mints ids with the native
#      extension in one database and with the SQL edition (psql -f) in another; it is
#      stopped, upgraded by pg_upgrade into an 18 cluster that preloads the library, and
#      started; the first id of each database is refused, the old server's claim naming
#      another system identifier, until each releases its node id as the runbook says;
#      then every new id is above every id of 17;
#   3. the SQL edition updated from the previous release's files to this release's (docs/
#      managed.md): the previous release's two files built by its own sql_edition/build.sh
#      from its commit, as its scripts/package.sh built them, and this release's as this
#      scripts/package.sh builds them (sql_edition_files; while the edition's version is
#      still the previous release's, built as the next patch release, which the test says);
#      on an 18 server preloading pg_tle, by a role that is not a superuser: psql -f of the
#      old pg_tle file, CREATE EXTENSION, ids; psql -f of the new one, ALTER EXTENSION
#      snowflake_sql UPDATE, ids; and in another database psql -v schema=snowflake -f of the
#      old script, ids, the new script, ids: each time the new release's version, and new
#      ids above the old ones. pg_tle: scripts/setup-pg_tle.sh's build in the 18 wheel;
#      SKIP where it is not built.
#
# from-source: docs/packaging.md's "From source" block, read from the page (the ```sh block
#   after its <!-- install-path: from-source --> comment) and run line by line in a Debian
#   sid root (the package test's root of 18, with Debian's postgresql-18, and a layer made
#   once with sid's Rust, which is new enough, and the packages the block's apt-get line
#   names, installed by that line), as root, in a clone of this tree kept between runs (as
#   a user's clone: brought to the tree as it stands, only changed files written, so a
#   rerun compiles only what changed) with cargo's default target directory in it; then a
#   server of the root's PostgreSQL 18 runs CREATE EXTENSION snowflake_pg and mints. Two
#   parts of it are stood in for, and the test says so: the crates come from this machine's
#   cargo download cache (cargo offline: the root's TLS trust is Debian's alone, and this
#   machine reaches the registry through its own), and the block's `cargo install
#   cargo-pgrx` is not compiled again: scripts/setup.sh runs that command on this machine
#   (with --debug: unoptimised), whose cargo-pgrx is put on the root's PATH
#   (FROM_SOURCE_CARGO_INSTALL=1 runs it in the root: a compile of several minutes).
#
# Every check prints its seconds.
# Usage: bash tests/install_paths.sh releases|from-source   (as root; releases after the
#   package steps of 17 and 18 and the build and install of 18, whose files it takes)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
what=${1:?usage: install_paths.sh releases|from-source}
fail() { echo "FAIL install paths ($what): $*" >&2; exit 1; }
test_began=$EPOCHREALTIME checked=$EPOCHREALTIME
ok() { echo "ok $* ($(seconds_since "$checked") s)"; checked=$EPOCHREALTIME; }
cd "$SNOWFLAKE_PG_ROOT"
version=$(extension_version)
roots=/var/lib/snowflake_pg/roots
root='' run='' mounts=() root_clusters=()

cleanup() {
  local code=$?
  trap - EXIT
  trap '' INT TERM
  if [[ -n $root ]]; then
    root_clusters_stop "$root" || code=1
    root_unmount "$root" "${mounts[@]}" || code=1
    # A failed run's overlay stays for a look (the servers' logs), until the next run.
    if ((code == 0)); then rm -rf --one-file-system "$run"; fi
  fi
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mount_at() { # mount_at DIR MOUNT-ARGS...: mounts on DIR, unmounted by cleanup
  local dir=$1; shift
  mkdir -p "$dir" && mount "$@" "$dir" && mounts+=("$dir")
}
# in_root COMMAND...: COMMAND in the root, as root; as_postgres COMMAND...: as its postgres.
in_root() { in_chroot "$root" "$@"; }
as_postgres() { in_chroot "$root" runuser -u postgres -- "$@"; }

releases() {
  local clean pg home dir tarball name file files_dir files_dir_var count compilers check port=6100
  clean=$(debian_server_root 15 amd64) || fail "no clean Debian root of PostgreSQL 15"
  run=$roots/run-install-paths root=$run/root
  root_overlay "$clean" "$run" || fail "no overlay over $clean"
  mount_at "$root/dev/shm" -t tmpfs tmpfs
  compilers=$(in_root sh -c "for tool in rustc cargo rustup clang gcc cc ld; do command -v \$tool || true; done")
  [[ -z $compilers ]] || fail "the clean root has compilers: $compilers"

  # PostgreSQL 17 and 18, builds of this machine that no Debian package fits, each an
  # overlay of its own in the root (what installs into it stays there).
  declare -A homes=([17]=$PG17_WHEEL_DIR [18]=$PG18_WHEEL_DIR) bindirs=() configs=()
  for pg in 17 18; do
    home=${homes[$pg]} dir=$run/pg$pg
    mkdir -p "$dir/upper" "$dir/work"
    mount_at "$root$home" -t overlay overlay -o "lowerdir=$home,upperdir=$dir/upper,workdir=$dir/work"
    bindirs[$pg]=$(pg_bin_of "$pg") configs[$pg]=$(pg_config_of "$pg")
    # The source install of this machine's steps, taken out: the tarball's files must be
    # what the server loads.
    rm -f "$root$("${configs[$pg]}" --pkglibdir)/snowflake_pg.so" "$root$("${configs[$pg]}" --sharedir)"/extension/snowflake_pg[.-]*
  done

  # 1. The tarballs, by the README's command.
  for pg in 17 18; do
    files_dir_var=RELEASE_FILES_DIR$pg
    files_dir=${!files_dir_var:-$SNOWFLAKE_PG_ROOT/target/release-files-pg$pg}
    name=snowflake_pg-$version-pg$pg-amd64-linux-gnu
    tarball=$files_dir/$name.tar.gz
    [[ -f $tarball ]] || fail "no $tarball: tests/package.sh $pg (or scripts/package.sh $pg) makes it"
    mkdir -p "$root/tmp/pg$pg" && cp "$tarball" "$root/tmp/pg$pg/"
    in_root sh -c "cd /tmp/pg$pg && tar -xzf $name.tar.gz && sh $name/install.sh ${configs[$pg]}" >"$run/install-$pg.log" 2>&1 ||
      { cat "$run/install-$pg.log"; fail "the tarball's install.sh failed for PostgreSQL $pg"; }
    count=0
    for file in "$root/tmp/pg$pg/$name/extension"/*; do
      cmp -s "$file" "$root$("${configs[$pg]}" --sharedir)/extension/$(basename "$file")" ||
        fail "install.sh did not install $(basename "$file") into PostgreSQL $pg"
      count=$((count + 1))
    done
    cmp -s "$root/tmp/pg$pg/$name/lib/snowflake_pg.so" "$root$("${configs[$pg]}" --pkglibdir)/snowflake_pg.so" ||
      fail "install.sh did not install the library into PostgreSQL $pg"
  done
  ok "the tarballs of 17 and 18, by the README's tar -xzf ... && sh .../install.sh PG_CONFIG, in a clean Debian 12 root (no compiler): the library and every extension file in each server's directories"

  # 2. pg_upgrade, 17 to 18, as docs/operations.md says.
  local sql_script
  sql_script=$(find "${RELEASE_FILES_DIR18:-$SNOWFLAKE_PG_ROOT/target/release-files-pg18}" -name "snowflake_sql--$(sql_edition_version).sql" -print -quit)
  [[ -n $sql_script ]] || fail "no snowflake_sql--$(sql_edition_version).sql among 18's release files"
  cp "$sql_script" "$root/tmp/"
  CLUSTERS_DIR=$root/var/tmp/snowflake_pg
  root_cluster_start "$root" "${bindirs[17]}" old17 $((port + 1)) shared_preload_libraries=snowflake_pg ||
    fail "PostgreSQL 17 preloading the tarball's library did not start"
  sql old17 "CREATE DATABASE app" -c "CREATE DATABASE managed" >/dev/null
  sql old17 "CREATE EXTENSION snowflake_pg" -d app -c "CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), n int)" \
    -c "INSERT INTO t (n) SELECT g FROM generate_series(1, 1000) g" >/dev/null
  as_postgres "${bindirs[17]}/psql" -X -q -h /var/tmp/snowflake_pg/old17 -p $((port + 1)) -d managed -v schema=snowflake \
    -f "/tmp/$(basename "$sql_script")" >"$run/sql-edition-17.log" 2>&1 || { cat "$run/sql-edition-17.log"; fail "psql -f of the SQL edition failed on 17"; }
  sql old17 "SELECT snowflake.snowflake_configure(node_id => 1)" -d managed \
    -c "CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake.snowflake_next(), n int)" \
    -c "INSERT INTO t (n) SELECT g FROM generate_series(1, 1000) g" >/dev/null
  before_app=$(sql old17 "SELECT max(id) FROM t" -d app) before_managed=$(sql old17 "SELECT max(id) FROM t" -d managed)
  old_system=$(sql old17 "SELECT system_identifier FROM pg_control_system()")
  root_cluster_ctl "$root" "${bindirs[17]}" old17 stop
  ok "PostgreSQL 17, preloading: 1,000 ids of the native extension (database app) and 1,000 of the SQL edition by psql -f (database managed, node 1); stopped"

  # As the old cluster: 18's initdb turns data checksums on by default, 17's does not, and
  # pg_upgrade wants both alike.
  root_cluster_init "$root" "${bindirs[18]}" new18 --no-data-checksums
  echo "shared_preload_libraries = 'snowflake_pg'" >>"$CLUSTERS_DIR/new18/data/postgresql.conf"
  as_postgres sh -c "cd /var/tmp/snowflake_pg/new18 && '${bindirs[18]}/pg_upgrade' --old-bindir='${bindirs[17]}' --new-bindir='${bindirs[18]}' \
    --old-datadir=/var/tmp/snowflake_pg/old17/data --new-datadir=/var/tmp/snowflake_pg/new18/data \
    --socketdir=/var/tmp/snowflake_pg/new18 --old-port=$((port + 2)) --new-port=$((port + 3))" >"$run/pg_upgrade.log" 2>&1 ||
    { cat "$run/pg_upgrade.log"; fail "pg_upgrade 17 to 18 failed"; }
  root_cluster_ctl "$root" "${bindirs[18]}" new18 start $((port + 4)) || fail "the upgraded 18 did not start"
  new_system=$(sql new18 "SELECT system_identifier FROM pg_control_system()")
  [[ $new_system != "$old_system" ]] || fail "pg_upgrade kept the system identifier $old_system"
  for db in app managed; do
    schema=
    [[ $db == app ]] || schema=snowflake.
    refused=$(sql new18 "SELECT ${schema}snowflake_next()" -d "$db" 2>&1) && fail "database $db minted after pg_upgrade before its claim was released: $refused"
    [[ $refused == *"is claimed by another server"*"$old_system"* ]] ||
      fail "database $db after pg_upgrade: '$refused', not a refusal naming the old system identifier $old_system"
    # The runbook's step: the node id released, in each database, before its first id.
    [[ $(sql new18 "SELECT ${schema}snowflake_release_node(node_id) FROM ${schema}snowflake_status" -d "$db") == t ]] ||
      fail "database $db: snowflake_release_node(node_id) FROM snowflake_status did not release its claim"
  done
  sql new18 "SET client_min_messages = warning" -c "ALTER EXTENSION snowflake_pg UPDATE" -d app >/dev/null
  check=$(sql new18 "INSERT INTO t (n) SELECT g FROM generate_series(1001, 2000) g" -d app \
    -c "SELECT (SELECT min(id) FROM t WHERE n > 1000) > $before_app, (SELECT count(DISTINCT id) FROM t), (SELECT preloaded FROM snowflake_status)")
  [[ $check == "t|2000|t" ]] || fail "database app after pg_upgrade (new ids above the old, distinct ids, preloaded): $check"
  check=$(sql new18 "INSERT INTO t (n) SELECT g FROM generate_series(1001, 2000) g" -d managed \
    -c "SELECT (SELECT min(id) FROM t WHERE n > 1000) > $before_managed, (SELECT count(DISTINCT id) FROM t)")
  [[ $check == "t|2000" ]] || fail "database managed after pg_upgrade (new ids above the old, distinct ids): $check"
  ok "pg_upgrade 17 to 18 (a new system identifier): each database's first id refused by its old claim, then, its node id released (SELECT snowflake_release_node(node_id) FROM snowflake_status), 1,000 more ids above every id of 17, all distinct, in both editions"
  root_cluster_ctl "$root" "${bindirs[18]}" new18 stop

  # 3. The SQL edition, from the previous release's files to this release's.
  sql_edition "$port"
  echo "ok install paths (releases) ($(seconds_since "$test_began") s)"
}

# sql_edition PORT: step 3 of releases (above).
sql_edition() {
  local port=$1 old_tree old_dir=$run/sql-edition-old new_dir=$run/sql-edition-new old new next note=''
  old_tree=$(release_tree "$PREVIOUS_RELEASE" "$PREVIOUS_RELEASE_COMMIT") || fail "no tree of $PREVIOUS_RELEASE"
  old=$PREVIOUS_RELEASE new=$(sql_edition_version)
  # As its scripts/package.sh made them: its sql_edition/build.sh, no option.
  bash "$old_tree/sql_edition/build.sh" "$old_dir" >/dev/null || fail "$old's sql_edition/build.sh failed"
  if [[ $new == "$old" ]]; then
    # This tree's edition is still at the previous release: its files built as the next
    # patch release, as scripts/package.sh builds a release's (sql_edition_files).
    next=${old%.*}.$((${old##*.} + 1))
    sql_edition_files "$new_dir" "$next" >/dev/null || fail "sql_edition_files $next failed"
    note=" (this tree's edition is still $old: its files built as $next by sql_edition_files, as scripts/package.sh builds a release's)"
    new=$next
  else
    new_dir=${RELEASE_FILES_DIR18:-$SNOWFLAKE_PG_ROOT/target/release-files-pg18}
  fi
  for file in "$old_dir/snowflake_sql--$old.sql" "$old_dir/snowflake_sql--$old--pg_tle.sql" \
    "$new_dir/snowflake_sql--$new.sql" "$new_dir/snowflake_sql--$new--pg_tle.sql"; do
    [[ -f $file ]] || fail "no $file"
    cp "$file" "$root/tmp/"
  done
  grep -q "pgtle.install_update_path('snowflake_sql', '$old', '$new'" "$root/tmp/snowflake_sql--$new--pg_tle.sql" ||
    fail "snowflake_sql--$new--pg_tle.sql registers no update path from $old"
  local tle=true libdir
  libdir=$("$(pg_config_of 18)" --pkglibdir)
  if [[ ! -f $root$libdir/pg_tle.so ]]; then tle=false; fi
  local settings=()
  if $tle; then settings=(shared_preload_libraries=pg_tle); fi
  root_cluster_start "$root" "$(pg_bin_of 18)" sqled18 $((port + 5)) "${settings[@]}" || fail "PostgreSQL 18 for the SQL edition did not start"
  # The service's master user: no superuser; CREATEROLE for claims between databases, and
  # pgtle_admin (docs/managed.md, "Installing").
  sql sqled18 "CREATE ROLE master LOGIN CREATEROLE CREATEDB" -c "CREATE DATABASE tle OWNER master" -c "CREATE DATABASE plain OWNER master" >/dev/null
  # psql as the master user, in the root: the DBA's commands, as docs/managed.md gives them.
  dba() { local db=$1; shift; as_postgres "$(pg_bin_of 18)/psql" -X -q -v ON_ERROR_STOP=1 -h /var/tmp/snowflake_pg/sqled18 -p $((port + 5)) -U master -d "$db" "$@"; }
  mint() { # mint DATABASE N: N ids into table t, made if missing
    sql sqled18 "SET ROLE master" -d "$1" -c "SET client_min_messages = warning" -c "CREATE TABLE IF NOT EXISTS t (id bigint PRIMARY KEY DEFAULT snowflake.snowflake_next(), n int)" \
      -c "INSERT INTO t (n) SELECT g FROM generate_series(1, $2) g" >/dev/null
  }
  if $tle; then
    sql sqled18 "CREATE EXTENSION pg_tle" -d tle -c "GRANT pgtle_admin TO master" >/dev/null
    dba tle -f "/tmp/snowflake_sql--$old--pg_tle.sql" >"$run/tle.log" 2>&1 || { cat "$run/tle.log"; fail "registering $old with pg_tle failed"; }
    dba tle -c "CREATE SCHEMA snowflake" -c "GRANT USAGE ON SCHEMA snowflake TO PUBLIC" -c "CREATE EXTENSION snowflake_sql SCHEMA snowflake" \
      -c "SELECT snowflake.snowflake_configure(node_id => 0)" >>"$run/tle.log" 2>&1 || { cat "$run/tle.log"; fail "CREATE EXTENSION snowflake_sql $old failed"; }
    mint tle 1000
    before=$(sql sqled18 "SELECT max(id) FROM t" -d tle)
    # docs/managed.md's update: the next release's file, then ALTER EXTENSION ... UPDATE.
    dba tle -f "/tmp/snowflake_sql--$new--pg_tle.sql" >>"$run/tle.log" 2>&1 || { cat "$run/tle.log"; fail "registering $new with pg_tle failed"; }
    dba tle -c "ALTER EXTENSION snowflake_sql UPDATE" >>"$run/tle.log" 2>&1 || { cat "$run/tle.log"; fail "ALTER EXTENSION snowflake_sql UPDATE from $old to $new failed"; }
    mint tle 1000
    check=$(sql sqled18 "SELECT (SELECT extversion FROM pg_extension WHERE extname = 'snowflake_sql'), snowflake.snowflake_sql_version(),
      (SELECT min(id) FROM t WHERE id > $before) > $before, (SELECT count(*) FROM t WHERE id > $before), (SELECT count(DISTINCT id) FROM t),
      (SELECT rolsuper FROM pg_roles WHERE rolname = (SELECT extowner::regrole::text FROM pg_extension WHERE extname = 'snowflake_sql'))" -d tle)
    [[ $check == "$new|$new|t|1000|2000|f" ]] ||
      fail "after the pg_tle update (extension version, edition version, new ids above, their count, distinct ids, owner a superuser): $check, not $new|$new|t|1000|2000|f"
    ok "SQL edition by pg_tle, as a role that is no superuser: $old's file registered, CREATE EXTENSION, 1,000 ids; $new's file registered, ALTER EXTENSION snowflake_sql UPDATE: version $new, 1,000 ids above$note"
  else
    echo "SKIP the SQL edition through pg_tle: pg_tle is not built into PostgreSQL 18 here (scripts/setup-pg_tle.sh)"
  fi
  dba plain -v schema=snowflake -f "/tmp/snowflake_sql--$old.sql" >"$run/plain.log" 2>&1 || { cat "$run/plain.log"; fail "psql -f of $old's script failed"; }
  dba plain -c "SELECT snowflake.snowflake_configure(node_id => 1)" >>"$run/plain.log" 2>&1 || { cat "$run/plain.log"; fail "snowflake_configure failed"; }
  mint plain 1000
  before=$(sql sqled18 "SELECT max(id) FROM t" -d plain)
  dba plain -v schema=snowflake -f "/tmp/snowflake_sql--$new.sql" >>"$run/plain.log" 2>&1 || { cat "$run/plain.log"; fail "psql -f of $new's script over $old failed"; }
  mint plain 1000
  check=$(sql sqled18 "SELECT snowflake.snowflake_sql_version(), (SELECT min(id) FROM t WHERE id > $before) > $before,
    (SELECT count(*) FROM t WHERE id > $before), (SELECT count(DISTINCT id) FROM t)" -d plain)
  [[ $check == "$new|t|1000|2000" ]] || fail "after the psql -f update (edition version, new ids above, their count, distinct ids): $check, not $new|t|1000|2000"
  ok "SQL edition by psql -f, as the same role: $old's script, 1,000 ids; $new's script with the same schema: version $new, 1,000 ids above$note"
  root_cluster_ctl "$root" "$(pg_bin_of 18)" sqled18 stop
}

from_source() {
  local clean layer other block lines=() line packages check config clone=/var/lib/snowflake_pg/from-source/snowflake_pg port=6110
  local cargo_home=${CARGO_HOME:-$HOME/.cargo} stood_in=()
  clean=$(debian_server_root 18 amd64) || fail "no clean Debian root of PostgreSQL 18"
  # The page's block: its lines, continuations joined, comments and blank lines left out.
  block=$(doc_block docs/packaging.md from-source) || fail "no block of the path in docs/packaging.md"
  while IFS= read -r line; do
    line=${line%%#*}
    [[ -n ${line//[[:space:]]/} ]] && lines+=("$line")
  done < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' <<<"$block")
  packages=$(printf '%s\n' "${lines[@]}" | sed -n 's/^apt-get install \(-[^ ]* \)*//p' | tr ' ' '\n' | grep -v '^-' | sort -u | paste -sd ' ')
  [[ -n $packages ]] || fail "the block installs nothing with apt-get install"
  # The layer: sid's Rust (rustc, cargo, rustfmt: what rustup's default profile has), then
  # the block's packages, installed once.
  layer=$roots/layer-from-source-$(md5sum <<<"$packages" | cut -c1-8)
  for other in "$roots"/layer-from-source-*; do # the layers of other package lists
    if [[ -e $other && $other != "$layer" && $other != "$layer".* ]]; then rm -rf --one-file-system "$other"; fi
  done
  # shellcheck disable=SC2086 # the packages are words
  layer=$(debian_root_layer "$clean" "$layer" rustc cargo rustfmt $packages) ||
    fail "installing sid's Rust and $packages over $clean failed"
  run=$roots/run-from-source root=$run/root
  root_overlay "$layer" "$run" || fail "no overlay over $layer"
  mount_at "$root/dev/shm" -t tmpfs tmpfs
  ok "a clean sid root: the package test's, with Debian's postgresql-18, and $(in_root rustc --version) with $packages (a layer made once)"

  # The new user is root in the sid root: the block runs in a clone in root's home there
  # (paths inside the root, not of this machine).
  local home=/root
  mkdir -p "$(dirname "$clone")/pgrx-home"
  clone_update "$clone" || fail "no clone of the tree in $clone"
  mount_at "$root$home/snowflake_pg" --bind "$clone"
  mount_at "$root$home/.cargo/registry" --bind "$cargo_home/registry"
  mount_at "$root$home/.cargo/git" --bind "$cargo_home/git"
  # ~/.pgrx kept between runs too, as a user's: pgrx's bindings are made again whenever its
  # config.toml changes (pgrx-bindgen's rerun-if-changed), and the block's `cargo pgrx init`
  # writes it at every run; written alike, it keeps the time of the run that wrote it first.
  mount_at "$root$home/.pgrx" --bind "$(dirname "$clone")/pgrx-home"
  stood_in+=("the crates' download from the registry: this machine's cargo cache, cargo offline in the root")
  ok "the clone in $home/snowflake_pg of the root (kept between runs, brought to this tree: $clone)"
  for line in "${lines[@]}"; do
    if [[ $line =~ ^cargo\ install\ .*cargo-pgrx && ${FROM_SOURCE_CARGO_INSTALL:-0} != 1 ]]; then
      [[ $line == *"--version $PGRX_VERSION"* ]] || fail "the block installs another cargo-pgrx than $PGRX_VERSION: $line"
      install -m 755 "$(command -v cargo-pgrx)" "$root/usr/local/bin/cargo-pgrx"
      stood_in+=("$line: this machine's cargo-pgrx $PGRX_VERSION, which scripts/setup.sh installed by the same command, unoptimised (--debug)")
      ok "$line: STOOD IN FOR by this machine's cargo-pgrx (scripts/setup.sh ran the same command, --debug)"
      continue
    fi
    in_chroot "$root" env -C "$home/snowflake_pg" PATH="$home/.cargo/bin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
      CARGO_NET_OFFLINE=true DEBIAN_FRONTEND=noninteractive sh -c "$line" >"$run/line.log" 2>&1 ||
      { tail -n 40 "$run/line.log"; fail "'$line' failed in the sid root"; }
    if [[ $line == "cargo pgrx init"* ]]; then
      config=$(dirname "$clone")/pgrx-home/config.toml
      if cmp -s "$config" "$config.kept"; then touch -r "$config.kept" "$config"; else cp -p "$config" "$config.kept"; fi
    fi
    ok "$line: $(tail -n 1 "$run/line.log")"
  done
  CLUSTERS_DIR=$root/var/tmp/snowflake_pg
  root_cluster_start "$root" /usr/lib/postgresql/18/bin source18 "$port" || fail "the root's PostgreSQL 18 did not start"
  check=$(sql source18 "CREATE EXTENSION snowflake_pg" -c "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'" \
    -c "SELECT count(DISTINCT snowflake_next()) FROM generate_series(1, 1000)")
  [[ $check == "$version"$'\n'1000 ]] || fail "CREATE EXTENSION and 1,000 ids on the source build: $check"
  root_cluster_ctl "$root" /usr/lib/postgresql/18/bin source18 stop
  ok "CREATE EXTENSION snowflake_pg ($version) on the root's PostgreSQL 18, 1,000 distinct ids"
  echo "stood in for:"
  printf '  %s\n' "${stood_in[@]}"
  echo "ok install paths (from source) ($(seconds_since "$test_began") s)"
}

case $what in
  releases) releases ;;
  from-source) from_source ;;
  *) fail "usage: install_paths.sh releases|from-source" ;;
esac
