#!/usr/bin/env bash
# The reliability suite: every scenario in this directory (NN-name.sh) against real
# servers of one PostgreSQL version, with the extension installed. The figures of the
# run go to target/reliability-pgV.txt (see docs/reliability.md).
# Usage: bash tests/reliability/run.sh 15|16|17|18 [scenario ...]   (all scenarios by default)
# A scenario is named by its file, with or without .sh: 06-clock, 06-clock.sh.
# With RELIABILITY_LAYOUT set to a layout, every server preloads the library with that
# snowflake.layout, and the figures go to target/reliability-pgV-layout.txt.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
source "$here/../../scripts/lib.sh"
version=${1:?usage: run.sh 15|16|17|18 [scenario ...]}
pg_major "$version" >/dev/null || exit 2
shift
scenarios=("$@")
((${#scenarios[@]})) || scenarios=("$here"/[0-9][0-9]-*.sh)

export RELIABILITY_REPORT=$SNOWFLAKE_PG_ROOT/target/reliability-pg$version${RELIABILITY_LAYOUT:+-layout}.txt
mkdir -p "$(dirname "$RELIABILITY_REPORT")"
layout=${RELIABILITY_LAYOUT:+, layout \"$RELIABILITY_LAYOUT\"}
echo "# reliability suite, PostgreSQL $version$layout, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs" \
  >"$RELIABILITY_REPORT"
for scenario in "${scenarios[@]}"; do
  [[ -f $scenario ]] || scenario=$here/${scenario%.sh}.sh
  run_step "$(basename "$scenario" .sh)" bash "$scenario" "$version"
done
steps_report "reliability, PostgreSQL $version"
