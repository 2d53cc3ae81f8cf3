#!/usr/bin/env bash
# Sets up the machine (scripts/setup-tests.sh), then runs the tests of snowflake_pg against
# every supported PostgreSQL: lint, unit and property tests with #[pg_test]s (cargo pgrx
# test), the pg_regress suite, the upgrades, the packages (in clean Debian roots; 16's
# tarball), the SQL edition, the operations test (exporter and alert rules), the security
# suite, the concurrency test and the reliability suite, all of them on 15 and 18 (the
# first and the last major of the host), on 19 (in the build root) all but the gene
# layout's runs, and on 16 and 17 the subset below, which takes every path that depends on
# the version; the reliability scenarios of the slot table, the high-water mark and the
# clock on emulated arm64 servers of 15 and 19; the docs and the client libraries on 15 alone
# (see below); two steps at a time (see below), each on servers and ports of its own;
# then no server log of the run may show an internal error (XX000). Each piece also runs
# alone against an installed build (see the README, "Tests").
# Usage: bash tests/run.sh [15|16|17|18|19 ...]   (all five by default)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
bash scripts/setup-tests.sh || exit 1
# shellcheck source=scripts/lib.sh
source scripts/lib.sh
# shellcheck source=tests/reliability/run.sh
source tests/reliability/run.sh

versions=("$@")
((${#versions[@]})) || versions=("${PG_VERSIONS[@]}")
for v in "${versions[@]}"; do pg_major "$v" >/dev/null || exit 2; done
# The majors that get every test; the others get the subset.
full_versions=" 15 18 "
# A gene layout with few sequence bits (256 ids per ms per backend), on which the
# scenarios that mint the most run again: bursts borrow ticks and meet the lead bound.
gene_layout='time:41, node:2, slot:8, sequence:8, gene:4'
gene_scenarios=(01-churn 02-pooler 03-parallel 04-terminate 07-burst)
# The major of the two steps that run once. The docs: their output is 15's (the README's
# server), pg_partman's recipe needs Debian's pg_partman (15 only), and what differs by
# version is tested on each. The client libraries: what they use is the protocol's, the
# SQL's and the extension's functions, none of which differs by version (RETURNING, COPY,
# prepared statements, composite types, bigint and json as text), and the order of ids
# they rely on is checked on every major by the pg_regress suite.
once_version=15
# The majors whose arm64 packages are tested under emulation (every major's are built and
# checked): the oldest and the newest, and 16's tarball, checked as files. Each arm64
# Debian root takes about 6.5 minutes to make on a new machine, a package test about a
# minute; 17's and 18's run alone (bash tests/package.sh 17 arm64): see docs/packaging.md.
arm64_test_versions="15 16 19"
# The majors that run every reliability scenario: the full ones, and 19, the newest, in the
# build root (its backend slots are MyProcNumber's, as from 17, but the server around them
# is new), with the operations test. The scenarios that mint the most run again on the gene
# layout on the full ones alone: what that adds is the layout's bit arithmetic, which is
# no version's.
reliability_all_versions=" 15 18 19 "
# The scenarios run again with every server Debian's arm64 PostgreSQL, the arm64 release
# files' library in it, emulated (tests/reliability/emulated.sh), on the oldest and the
# newest major, after their arm64 package test (whose clean root they take): those of the
# slot table, the high-water mark and the clock, whose code is atomics and clock reads that
# another architecture may do otherwise. An emulated server is several times slower: the
# scenarios keep their invariants (every id distinct, none below the mark), not their
# timings (RELIABILITY_EMULATED in each).
arm64_reliability_versions=" 15 19 "
arm64_scenarios=(
  01-churn               # slots change hands over and over
  04-terminate           # a slot freed by a terminated backend, taken over at once
  05-crash               # slots and slot marks across a crash restart
  06-clock               # clock steps under live backends; between two holders of one slot
  13-high-water-mark     # restarts with the clock set back, kill -9 of the postmaster, the mark unwritable
)
# And the burst, on a layout of 64 ids a ms: an emulated backend mints 60,000 to 150,000
# ids a second, never past the 4,096 a ms of the default layout, and on this layout its
# bursts borrow ticks, meet the lead bound and hand their slot over ahead of the clock
# (slot marks, preloaded).
arm64_burst_layout='time:41, node:2, slot:8, sequence:6, gene:6'
# Left out on arm64: the rest depends on no atomics or clock reads of the architecture, or
# costs minutes of emulated backends' starts for a slot table that 01, 04 and 05 take
# (12-reconnect-storm's storms, 24-slots-by-need's 200 and 300 clients at once; and
# snowflake_core's threaded unit tests).

# The subset on 16 and 17: clippy and the cargo pgrx tests (#[pg_test]s), build and install,
# the pg_regress suite, the SQL edition (what it rests on, advisory locks, sequences and
# their WAL, pg_tle, is the server's own on each version), the security suite (stock and
# preloading: what a plain role may do changes between versions), concurrency on a stock
# and a preloading server, and the reliability scenarios below. What differs by version in
# the code is the backend slot (MyBackendId - 1 up to 16, MyProcNumber from 17;
# src/backend.rs), and around it what the server does with slots: how many there are
# (MaxBackends), which one a new session gets (the lowest free up to 16, in turn from 17),
# what parallel workers and crash restarts do with them; then what the server offers:
# logical replication both ways (origin = none, from 16) and Citus (15 to 17, where setup
# built it). The scenarios of that:
subset_scenarios=(
  01-churn               # slots change hands over and over
  03-parallel            # parallel workers, each in a slot of its own
  04-terminate           # a slot freed by a terminated backend, taken over at once
  05-crash               # slots and slot marks across a crash restart
  06-clock               # clock steps between two holders of one slot (in_slot, by version)
  07-burst               # the hand-over of a slot after a burst ran ahead
  10-settings            # the slot count (MaxBackends) against the slot bits
  12-reconnect-storm     # slot marks under a storm of new sessions
  13-high-water-mark     # the mark, from the slot marks, across restarts and kill -9
  14-citus               # node ids from Citus groups; SKIP where Citus is not built
  15-logical-replication # fan-in on every version; both ways (origin = none) from 16 on
  18-status              # the per-slot counters of snowflake_status
  21-big-clusters        # 256 slots against the server's slot count
)
# Left out on 16 and 17, none of them able to differ by version: no version-dependent
# code, and nothing that rests on what the server does with slots.
#   02-pooler: DISCARD ALL, RESET ALL and the like leave a backend's generator alone, in
#     the same process and slot; only SQL-level session state changes.
#   08-standby: RecoveryInProgress() and a streaming standby, the same call and answer on
#     every version.
#   09-bad-input: the arithmetic of the functions on extreme values, pure Rust.
#   11-layouts: layout parsing, bit arithmetic and the refusals at start (settings that
#     pgrx declares the same way on every version); its many-clients part is the slot
#     hand-over that 01-churn and the concurrency test take.
#   16-pg-partman: Debian's pg_partman is for PostgreSQL 15 only (SKIP elsewhere).
#   17-node-claims, 22-settings-never-node-0: claims through SPI and postgres_fdw, pg_dump
#     of them, the checks of the settings: the same code and SQL on every version.
#   23-stalled-renewal: the wait for a renewal of the mark that hangs (sleeps that check
#     for interrupts), the same calls on every version; the mark itself is 13's.
#   19-upgrade, 20-convert-dump: the extension's SQL scripts, pg_dump and pg_restore of
#     its objects: version-independent SQL.
#   24-slots-by-need: the table of minting slots is atomics in snowflake_core (unit tests,
#     threads included); a preloading server takes and gives back its slots in 05, 06, 12
#     and 13 on every version, with that version's process numbers as the first choice.
#   25-failover: the reservation's WAL records, their replay and the promotion use the
#     same calls on every version (RegisterCustomRmgr, XLogInsert, rm_cleanup); about 70 s.
#   The gene-layout runs: bit arithmetic, taken on 15 and 18.

shell_lint() { # every shell script, the sourced files followed
  local scripts
  mapfile -t scripts < <(git ls-files --cached --others --exclude-standard -- '*.sh' .ci/run)
  shellcheck -x "${scripts[@]}"
}

# The steps, two at a time (see queue_step in scripts/lib.sh). What compiles holds the build
# directory ("cargo" here, "cargo-root" in the build root), one build at a time each, each
# major in turn: its #[pg_test]s (which install their own build into that PostgreSQL) and
# then its release build and install, after which that major's server steps may start
# beside the next major's build; 15 and 18 first, which have the most server steps. The
# tarball test (16) swaps the installed files, so it runs after every other step of its
# major; the packages of 15, 17, 18 and 19 are tested in Debian roots of their own, beside
# anything. Steps that share a cluster name and port hold it: the pg_regress suite and the
# upgrade test (which runs that suite), the concurrency modes, a scenario's default and
# gene-layout runs. A major of the build root (19) runs every step there (on_major).
time_forget
internal_errors_forget
queue_step "lint: cargo fmt" - - cargo fmt --check
queue_step "lint: shellcheck" - - shell_lint
queue_step "lint: workflows (check-jsonschema, zizmor)" - - bash tests/workflows.sh
build_order=()
for v in "${versions[@]}"; do [[ $full_versions == *" $v "* ]] && build_order+=("$v"); done
for v in "${versions[@]}"; do [[ $full_versions == *" $v "* ]] || build_order+=("$v"); done
builds_of() { if in_build_root_major "$1"; then echo cargo-root; else echo cargo; fi; }
for v in "${build_order[@]}"; do
  queue_step "pg$v: unit, property and pg tests, clippy" - "$(builds_of "$v")" on_major "$v" cargo_tests "$v"
  queue_step "pg$v: build and install" "pg$v: unit, property and pg tests, clippy" "$(builds_of "$v")" \
    on_major "$v" install_extension "$v"
done
queue_step "core: unit and property tests, clippy, no PostgreSQL" - cargo linted cargo test --quiet -p snowflake_core --all-targets
# The queue starts the first step that may start, in the order queued: so first the steps
# of the long chains, the packages in Debian roots, and on arm64 the cross-compiled release
# files, their package test and the emulated scenarios after it, each minutes on end; then
# the steps that take their files (images, install paths, the workflows' steps); then each
# major's steps against its installed build. The machine's cores are busy throughout: the
# order decides only how few steps run alone at the end. The majors whose arm64 files go on
# to a package test and the emulated scenarios come first, the newest first, so that the
# build root cross-compiles theirs before the others': on a new machine, where each of
# those builds takes minutes and the arm64 roots are made by the package tests, their
# chains are the longest of the run.
chain_order=()
for v in "${build_order[@]}"; do [[ $arm64_reliability_versions == *" $v "* ]] && chain_order=("$v" "${chain_order[@]}"); done
for v in "${build_order[@]}"; do [[ $arm64_reliability_versions == *" $v "* ]] || chain_order+=("$v"); done
declare -A image_inputs=() arm64_files=()
for v in "${chain_order[@]}"; do
  installed="pg$v: build and install"
  if [[ -n $(debian_release_of "$v") ]]; then
    # In a clean Debian root, on ports of its own: it touches nothing installed here. The
    # upgrade from 0.3.0's package runs on the host's majors (tests/package.sh's
    # previous_majors), not in the build root.
    upgrade=", upgrade from 0.3.0"
    in_build_root_major "$v" && upgrade=""
    package_step="pg$v: package in a clean Debian $(debian_release_of "$v") root (apt-get install, pg_regress, pgbench preloaded, remove$upgrade)"
    queue_step "$package_step" "$installed" - on_major "$v" bash tests/package.sh "$v"
    # The steps whose release files the CloudNativePG images are made of (below).
    image_inputs[$v]="$package_step|pg$v arm64: release files cross-compiled (the glibc each library needs checked)"
  fi
  # arm64: every major's release files cross-compiled in the build root (after the host's
  # build of the major, whose extension files they take); those of arm64_test_versions
  # then tested in a clean arm64 Debian root under emulation, the others' only built and
  # checked (see arm64_test_versions).
  arm64_files[$v]=$SNOWFLAKE_PG_ROOT/target/release-files-arm64-pg$v
  queue_step "pg$v arm64: release files cross-compiled (the glibc each library needs checked)" "$installed" cargo-root \
    env RELEASE_FILES_DIR="${arm64_files[$v]}" bash scripts/package.sh --arch arm64 "$v"
  if [[ $v == 15 ]]; then
    # The apt repository of 15's two packages and 0.3.0's, from the package test's files and
    # Debian root and the arm64 build's files.
    queue_step "pg15: apt repository (signed, over loopback HTTP: install 0.3.0, upgrade, remove; a changed index and another key refused)" \
      "$package_step|pg15 arm64: release files cross-compiled (the glibc each library needs checked)" - \
      bash tests/apt_repository.sh
  fi
  if [[ " $arm64_test_versions " == *" $v "* ]]; then
    what="package in a clean arm64 Debian $(debian_release_of "$v") root, under emulation"
    [[ -n $(debian_release_of "$v") ]] || what="tarball (its aarch64 library, install.sh refusing this machine's PostgreSQL $v)"
    queue_step "pg$v arm64: $what" \
      "pg$v arm64: release files cross-compiled (the glibc each library needs checked)" - \
      on_major "$v" env RELEASE_FILES_DIR="${arm64_files[$v]}" bash tests/package.sh "$v" arm64
  fi
  if [[ $arm64_reliability_versions == *" $v "* ]]; then
    arm64_scenario_step() { # NAME HOLDS COMMAND...: after the arm64 package test of major v
      queue_step "pg$v: $1" "pg$v arm64: $what" "$2" on_major "$v" "${@:3}"
    }
    RELEASE_FILES_DIR=${arm64_files[$v]} RELIABILITY_ARCH=arm64 reliability_queue "$v" arm64_scenario_step "${arm64_scenarios[@]}"
    RELEASE_FILES_DIR=${arm64_files[$v]} RELIABILITY_ARCH=arm64 RELIABILITY_LAYOUT=$arm64_burst_layout BURST_IDS=200000 \
      reliability_queue "$v" arm64_scenario_step 07-burst
  fi
done
# The CloudNativePG images of 18 and 19 (tests/images.sh), made from both majors' release
# tarballs of both architectures: after the four steps that write them. In a mount
# namespace of its own, on ports of its own: it touches nothing installed, holds nothing.
if [[ -n ${image_inputs[18]:-} && -n ${image_inputs[19]:-} ]]; then
  queue_step "images: CloudNativePG images of 18 and 19 (OCI archives read by hand and by skopeo; each server as CloudNativePG configures it, the other architecture's and major's image refused)" \
    "${image_inputs[18]}|${image_inputs[19]}" - bash tests/images.sh
fi
# The install paths of the docs and the workflows' steps, in clean Debian roots
# (docs/packaging.md, "The install paths and the workflows"): after the steps whose files
# and roots they take; the workflows' steps package the installed builds, so they hold
# the build directory (the source build compiles in a target directory of its own).
if [[ -n ${image_inputs[17]:-} && -n ${image_inputs[18]:-} ]]; then
  queue_step "install paths: the tarballs of 17 and 18, pg_upgrade 17 to 18, the SQL edition updated from $PREVIOUS_RELEASE (a clean Debian 12 root)" \
    "${image_inputs[17]}|${image_inputs[18]}" - bash tests/install_paths.sh releases
  queue_step "install paths: from source, docs/packaging.md's block (a clean Debian sid root)" "${image_inputs[18]}" - \
    bash tests/install_paths.sh from-source
fi
if ((${#versions[@]} == ${#PG_VERSIONS[@]})) && [[ -n ${image_inputs[15]:-} ]]; then
  after=("${image_inputs[15]}")
  for v in "${versions[@]}"; do after+=("pg$v: build and install" "pg$v arm64: release files cross-compiled (the glibc each library needs checked)"); done
  queue_step "workflows: every run: step of ci.yml and release.yml in clean Debian 12 roots, the network stood in for" \
    "$(IFS='|'; echo "${after[*]}")" cargo bash tests/workflows/steps.sh
fi
for v in "${build_order[@]}"; do
  installed="pg$v: build and install" server_steps=()
  server_step() { # NAME HOLDS COMMAND...: a step of major v against its installed build
    queue_step "pg$v: $1" "$installed" "$2" on_major "$v" "${@:3}"
    server_steps+=("pg$v: $1")
  }
  # The longest step of a major first, so that it does not end the run alone. On the
  # subset's majors, the SQL edition compares its functions with the native's on 25,000
  # random inputs each instead of 100,000 (the edges all the same), and logical
  # replication's loads run 5 s instead of 10: the same checks, for a quarter and a half
  # of the CPU, on majors whose code paths the others take too.
  sqled_inputs=()
  [[ $reliability_all_versions == *" $v "* ]] || sqled_inputs=(SQLED_INPUTS=25000)
  server_step "SQL edition (psql -f and pg_tle installs, the native's ids and errors, its promises)" - \
    env "${sqled_inputs[@]}" bash tests/sql_edition.sh "$v"
  if [[ $reliability_all_versions == *" $v "* ]]; then
    reliability_queue "$v" server_step
  else
    LR_SECONDS=5 reliability_queue "$v" server_step "${subset_scenarios[@]}"
  fi
  server_step "pg_regress suite" "regress$v" bash tests/regress.sh "$v"
  server_step "upgrades from every frozen release, pg_regress after each" "regress$v" bash tests/upgrade.sh "$v"
  if [[ $v == "$once_version" ]]; then
    server_step "docs (every SQL block run as written, the function and settings tables)" - bash tests/docs.sh "$v"
    server_step "clients (psycopg, SQLAlchemy, Django, node-postgres, pgjdbc, pgbouncer)" - bash tests/clients.sh "$v"
  fi
  server_step "operations (postgres_exporter against its own servers, alert rules tested on its scrapes)" - \
    bash tests/operations.sh "$v"
  server_step "security (a hostile role against every function)" - bash tests/security.sh "$v"
  server_step "security, library preloaded" - bash tests/security.sh "$v" preload
  server_step "concurrency (pgbench)" "concurrency$v" bash tests/concurrency.sh "$v"
  server_step "concurrency (pgbench), library preloaded" "concurrency$v" bash tests/concurrency.sh "$v" preload
  if [[ $full_versions == *" $v "* ]]; then
    RELIABILITY_LAYOUT=$gene_layout BURST_IDS=500000 reliability_queue "$v" server_step "${gene_scenarios[@]}"
    server_step "concurrency (pgbench), gene layout" "concurrency$v" bash tests/concurrency.sh "$v" gene
  fi
  if [[ -z $(debian_release_of "$v") ]]; then
    # The tarball replaces the installed files of this major, then puts the source
    # install back: after every other step of the major, holding the build directory.
    queue_step "pg$v: tarball (install.sh, pg_regress against it)" \
      "$(IFS='|'; echo "${server_steps[*]}")" cargo bash tests/package.sh "$v"
  fi
done
run_queued_steps
run_step "no internal error (XX000) in any server log" internal_errors_none
echo "== where the time went (seconds, steps side by side each counting their own)"
time_report
steps_report "tests, PostgreSQL ${versions[*]}"
