#!/usr/bin/env bash
# 3. Scale: ids per second of snowflake_next() with 1 and 2 clients, each its own backend
# and generator, and of clock_timestamp() run the same way (how well the machine itself
# scales the loop); PGBENCH_ROUNDS alternating rounds. snowflake.max_lead_ms is raised to
# its maximum meanwhile: at the default, a backend minting faster than 4,096 ids per ms
# soon reaches the bound and the figures would show the clock, not the CPU.
# Usage: bash bench/scale.sh CLUSTER   (run by bench/run.sh)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=$1 dir=$(cluster_dir "$1")
functions=(snowflake_next clock_timestamp) runs=()
for f in "${functions[@]}"; do
  echo "SELECT count($f()) FROM generate_series(1, $SCALE_BATCH);" >"$dir/scale_$f.sql"
  runs+=("$f 1" "$f 2")
done

reload_setting "$name" snowflake.max_lead_ms "$MAX_LEAD"
for ((r = 1; r <= PGBENCH_ROUNDS; r++)); do
  note "$name" "scale: round $r of $PGBENCH_ROUNDS"
  rotate "$r" "${runs[@]}" | while read -r f clients; do
    tps=$(tps "$name" "$clients" -f "$dir/scale_$f.sql" -T "$DURATION")
    sample "$name" scale "$f()" "$clients" "$r" "$tps"
  done
done
reload_setting "$name" snowflake.max_lead_ms "$DEFAULT_LEAD"
report "$name" scale
