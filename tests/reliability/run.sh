#!/usr/bin/env bash
# The reliability suite: every scenario in this directory (NN-name.sh) against real
# servers of one PostgreSQL version, with the extension installed, two at a time (each on
# servers and ports of its own). The figures of the run go to target/reliability-pgV.txt
# (see docs/reliability.md).
# Usage: bash tests/reliability/run.sh 15|16|17|18 [scenario ...]   (all scenarios by default)
# A scenario is named by its file, with or without .sh: 06-clock, 06-clock.sh.
# With RELIABILITY_LAYOUT set to a layout, every server preloads the library with that
# snowflake.layout, and the figures go to target/reliability-pgV-layout.txt.
# tests/run.sh sources this file for reliability_queue, to queue the scenarios among its
# other steps.

# reliability_queue V QUEUE [scenario ...]: begins the report of a run on PostgreSQL V (of
# RELIABILITY_LAYOUT, if set) and queues each scenario (all by default) as a step, with
# QUEUE NAME HOLDS COMMAND...: a function that queues a step (see queue_step). A scenario's
# runs on every layout hold one name, as they use the same servers and ports.
reliability_queue() {
  local version=$1 queue=$2 here scenario name label="" settings=()
  shift 2
  here=$SNOWFLAKE_PG_ROOT/tests/reliability
  local scenarios=("$@")
  ((${#scenarios[@]})) || scenarios=("$here"/[0-9][0-9]-*.sh)
  local report=$SNOWFLAKE_PG_ROOT/target/reliability-pg$version${RELIABILITY_LAYOUT:+-layout}.txt
  mkdir -p "$(dirname "$report")"
  echo "# reliability suite, PostgreSQL $version${RELIABILITY_LAYOUT:+, layout \"$RELIABILITY_LAYOUT\"}," \
    "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs" >"$report"
  settings=("RELIABILITY_REPORT=$report")
  if [[ -n ${RELIABILITY_LAYOUT:-} ]]; then
    settings+=("RELIABILITY_LAYOUT=$RELIABILITY_LAYOUT") label=", layout '$RELIABILITY_LAYOUT'"
    [[ -z ${BURST_IDS:-} ]] || settings+=("BURST_IDS=$BURST_IDS")
  fi
  for scenario in "${scenarios[@]}"; do
    [[ -f $scenario ]] || scenario=$here/${scenario%.sh}.sh
    [[ -f $scenario ]] || { echo "no scenario $scenario" >&2; return 2; }
    name=$(basename "$scenario" .sh)
    "$queue" "reliability $name$label" "pg$version-$name" env "${settings[@]}" bash "$scenario" "$version"
  done
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -uo pipefail
  # shellcheck source=scripts/lib.sh
  source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
  version=${1:?usage: run.sh 15|16|17|18 [scenario ...]}
  pg_major "$version" >/dev/null || exit 2
  shift
  scenario_step() { queue_step "pg$version: $1" - "$2" "${@:3}"; }
  reliability_queue "$version" scenario_step "$@" || exit 2
  run_queued_steps
  steps_report "reliability, PostgreSQL $version${RELIABILITY_LAYOUT:+, layout \"$RELIABILITY_LAYOUT\"}"
fi
