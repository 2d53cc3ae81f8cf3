#!/usr/bin/env bash
# The reliability suite: every scenario in this directory (NN-name.sh) against real
# servers of one PostgreSQL version, with the extension installed, two at a time (each on
# servers and ports of its own). The figures of the run go to target/reliability-pgV.txt
# (see docs/reliability.md).
# Usage: bash tests/reliability/run.sh 15|16|17|18|19 [scenario ...]   (all scenarios by default)
# A scenario is named by its file, with or without .sh: 06-clock, 06-clock.sh. On 19 it runs
# in the build root (on_major), as all of 19 does.
# With RELIABILITY_LAYOUT set to a layout, every server preloads the library with that
# snowflake.layout, and the figures go to target/reliability-pgV-layout.txt.
# With RELIABILITY_ARCH=arm64, every server is Debian's arm64 PostgreSQL V with the arm64
# release files' library, emulated (emulated.sh: needs those files, from scripts/package.sh
# --arch arm64 V, in $RELEASE_FILES_DIR or its default), and the figures go to
# target/reliability-pgV-arm64.txt.
# tests/run.sh sources this file for reliability_queue, to queue the scenarios among its
# other steps.

# reliability_queue V QUEUE [scenario ...]: begins the report of a run on PostgreSQL V (of
# RELIABILITY_LAYOUT, on RELIABILITY_ARCH, if set) and queues each scenario (all by
# default) as a step, with QUEUE NAME HOLDS COMMAND...: a function that queues a step (see
# queue_step). A scenario's runs on every layout hold one name, as they use the same
# servers and ports; its runs on another architecture another, as their servers are in a
# directory of their own.
reliability_queue() {
  local version=$1 queue=$2 here scenario name label="" settings=() run
  shift 2
  here=$SNOWFLAKE_PG_ROOT/tests/reliability
  local scenarios=("$@")
  ((${#scenarios[@]})) || scenarios=("$here"/[0-9][0-9]-*.sh)
  local arch=${RELIABILITY_ARCH:-}
  local report=$SNOWFLAKE_PG_ROOT/target/reliability-pg$version${RELIABILITY_LAYOUT:+-layout}${arch:+-$arch}.txt
  mkdir -p "$(dirname "$report")"
  echo "# reliability suite, PostgreSQL $version${RELIABILITY_LAYOUT:+, layout \"$RELIABILITY_LAYOUT\"}${arch:+, $arch (emulated)}," \
    "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs" >"$report"
  settings=("RELIABILITY_REPORT=$report")
  if [[ -n ${RELIABILITY_LAYOUT:-} ]]; then
    settings+=("RELIABILITY_LAYOUT=$RELIABILITY_LAYOUT") label=", layout '$RELIABILITY_LAYOUT'"
  fi
  # The scenarios' own measures of their loads, where given (each scenario reads its own).
  local measure
  for measure in BURST_IDS LR_SECONDS; do
    [[ -z ${!measure:-} ]] || settings+=("$measure=${!measure}")
  done
  if [[ -n $arch ]]; then
    label+=" ($arch, emulated)"
    [[ -z ${RELEASE_FILES_DIR:-} ]] || settings+=("RELEASE_FILES_DIR=$RELEASE_FILES_DIR")
  fi
  for scenario in "${scenarios[@]}"; do
    [[ -f $scenario ]] || scenario=$here/${scenario%.sh}.sh
    [[ -f $scenario ]] || { echo "no scenario $scenario" >&2; return 2; }
    name=$(basename "$scenario" .sh)
    run=(bash "$scenario" "$version")
    [[ -z $arch ]] || run=(bash "$here/emulated.sh" "$arch" "$version" "$name")
    "$queue" "reliability $name$label" "pg$version-$name${arch:+-$arch}" env "${settings[@]}" "${run[@]}"
  done
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -uo pipefail
  # shellcheck source=scripts/lib.sh
  source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
  version=${1:?usage: run.sh 15|16|17|18|19 [scenario ...]}
  pg_major "$version" >/dev/null || exit 2
  shift
  # Where PostgreSQL V runs: here, or in the build root (on_major).
  scenario_step() { queue_step "pg$version: $1" - "$2" on_major "$version" "${@:3}"; }
  reliability_queue "$version" scenario_step "$@" || exit 2
  run_queued_steps
  steps_report "reliability, PostgreSQL $version${RELIABILITY_LAYOUT:+, layout \"$RELIABILITY_LAYOUT\"}${RELIABILITY_ARCH:+, $RELIABILITY_ARCH (emulated)}"
fi
