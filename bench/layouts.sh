#!/usr/bin/env bash
# 5. Layouts: the call cost of snowflake_next() on other layouts, and of
# snowflake_next(gene), against the default layout's, in ROUNDS alternating rounds of
# CALLS calls. Each layout runs on a server of its own that preloads the library with
# it, the default layout too; and the default layout once more on the bench cluster,
# which does not preload it: the call without the high-water mark's check. Each sample
# is a new session. The layouts are chosen to
# take each path of the hot code (a 10 ms time unit, the sequence not lowest, a gene)
# with sequences wide enough that CALLS calls stay within snowflake.max_lead_ms (raised
# to its maximum here): the figures are the CPU's, not the lead bound's. js53 takes the
# 10 ms path; its 64 ids per tick would hold a loop to 6,400 ids per second.
# Usage: bash bench/layouts.sh CLUSTER   (run by bench/run.sh; samples kept in CLUSTER)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=$1
# The default layout first: the ratios are to it. An epoch in 2026 gives the 37-bit
# time of the gene layout room until 2030.
layouts=('default' 'time:35/10ms, node:2, slot:8, sequence:18' 'time:41, sequence:12, node:2, slot:8'
  'time:37, node:2, slot:8, sequence:12, gene:4')
servers=()
stop_servers() { local server; for server in "${servers[@]}"; do cluster_stop "$server"; done; }
trap stop_servers EXIT
for i in "${!layouts[@]}"; do
  servers+=("$name-layout$i")
  cluster_start "$name-layout$i" "$(cluster_version "$name")" $((5750 + i)) jit=off \
    shared_preload_libraries=snowflake_pg "snowflake.layout='${layouts[i]}'" \
    snowflake.epoch=2026-01-01 snowflake.max_lead_ms="$MAX_LEAD"
  cluster_psql "$name-layout$i" -q -c "CREATE EXTENSION snowflake_pg" -f "$BENCH_DIR/bench_ms.sql" >/dev/null
done
# Candidates: "SERVER|LAYOUT|CALL", the server by its cluster name. The bench cluster does
# not preload the library: the default layout there is the call without a high-water mark.
candidates=("$name|default, no preload|snowflake_next()")
for i in "${!layouts[@]}"; do candidates+=("$name-layout$i|${layouts[i]}|snowflake_next()"); done
candidates+=("$name-layout3|${layouts[3]}|snowflake_next(g)")
for ((r = 0; r <= ROUNDS; r++)); do # round 0 warms up, and is not kept
  note "$name" "layouts: round $r of $ROUNDS"
  rotate "$((r + 1))" "${candidates[@]}" | while IFS='|' read -r server layout call; do
    ms=$(sql "$server" "SELECT bench_ms(\$q\$$call\$q\$, $CALLS)")
    if ((r > 0)); then sample "$name" layouts "$layout|$call" 1 "$r" "$ms"; fi
  done
done
report "$name" layouts
