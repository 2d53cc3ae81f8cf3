#!/usr/bin/env bash
# 1. Call cost: CALLS calls of each candidate in one backend, timed in the server by
# bench_ms() (bench/setup.sql), in ROUNDS alternating rounds after a warm-up round of a
# tenth of the calls. All rounds in one psql session: one backend, with its library
# loaded, its PL/pgSQL compiled and its caches warm.
# Usage: bash bench/calls.sh CLUSTER   (run by bench/run.sh)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=$1
candidates=(g 'clock_timestamp()' 'snowflake_next()' "nextval('s')" 'gen_random_uuid()' 'next_id()')
if has_uuidv7 "$name"; then candidates+=('uuidv7()'); fi
{
  for c in "${candidates[@]}"; do echo "SELECT bench_ms(\$q\$$c\$q\$, $((CALLS / 10 + 1)));"; done
  for ((r = 1; r <= ROUNDS; r++)); do
    echo "\\warn [$name $(date +%T)] call cost: round $r of $ROUNDS"
    rotate "$r" "${candidates[@]}" | while read -r c; do
      echo "INSERT INTO samples (section, candidate, round, value)
        SELECT 'calls', \$q\$$c\$q\$, $r, bench_ms(\$q\$$c\$q\$, $CALLS);"
    done
  done
} | cluster_psql "$name" -q >/dev/null
report "$name" calls
