#!/usr/bin/env bash
# The reliability suite: every scenario in this directory (NN-name.sh) against real
# servers of one PostgreSQL version, with the extension installed. The figures of the
# run go to target/reliability-pgV.txt (see docs/reliability.md).
# Usage: bash tests/reliability/run.sh 15|18 [scenario ...]   (all scenarios by default)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=${1:?usage: run.sh 15|18 [scenario ...]}
shift
scenarios=("$@")
((${#scenarios[@]})) || scenarios=("$here"/[0-9][0-9]-*.sh)

report=$here/../../target/reliability-pg$version.txt
mkdir -p "$(dirname "$report")"
echo "# reliability suite, PostgreSQL $version, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs" >"$report"
passed=0 failed=0
for scenario in "${scenarios[@]}"; do
  [[ -f $scenario ]] || scenario=$here/$scenario.sh
  name=$(basename "$scenario" .sh) start=$SECONDS
  echo "-- $name"
  if RELIABILITY_REPORT=$report bash "$scenario" "$version"; then
    passed=$((passed + 1)); echo "   ok ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1)); echo "   FAILED ($((SECONDS - start)) s)"
  fi
done
echo "reliability, PostgreSQL $version: $passed passed, $failed failed"
((failed == 0))
