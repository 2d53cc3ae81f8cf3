#!/usr/bin/env bash
# 4. Bursts: one statement minting BURST ids in a new backend (bench/burst.sql), at the
# default snowflake.max_lead_ms and at LOW_LEAD, alternating the bound from round to
# round, BURST_ROUNDS rounds. An error in a burst goes into the report with its message.
# Usage: bash bench/bursts.sh CLUSTER   (run by bench/run.sh)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=$1
for ((r = 1; r <= BURST_ROUNDS; r++)); do
  note "$name" "bursts: round $r of $BURST_ROUNDS"
  for bound in $(rotate "$r" "$DEFAULT_LEAD" "$LOW_LEAD"); do
    reload_setting "$name" snowflake.max_lead_ms "$bound"
    if ! out=$(cluster_psql "$name" -q -v bound="$bound" -v round="$r" -v burst="$BURST" \
        -f "$BENCH_DIR/burst.sql" 2>&1); then
      out=$(grep -m1 ERROR <<<"$out" || echo "$out")
      sql "$name" "INSERT INTO samples (section, candidate, round, error)
        VALUES ('burst', '$bound', $r, \$q\$${out#*ERROR:  }\$q\$)"
    fi
  done
done
reload_setting "$name" snowflake.max_lead_ms "$DEFAULT_LEAD"
report "$name" bursts
