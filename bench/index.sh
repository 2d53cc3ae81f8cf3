#!/usr/bin/env bash
# 2. (continued) The size of each primary-key index of the insert path after ROWS rows:
# in bulk, one INSERT ... SELECT in one backend; and concurrently, pgbench with the first
# client count of CLIENTS, in transactions of the last count of ROWS_PER_TX rows.
# Usage: bash bench/index.sh CLUSTER   (run by bench/run.sh)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=$1
note "$name" "index sizes"
for t in $(key_tables "$name"); do
  sql "$name" "TRUNCATE t_$t" -c "INSERT INTO t_$t (payload) SELECT 1 FROM generate_series(1, $ROWS)"
  sample "$name" bulk "$t" 1 1 "$(index_size "$name" "$t")"
  sample "$name" concurrent "$t" "${CLIENTS%% *}" 1 \
    "$(concurrent_index "$name" "$t" "$ROWS" "${CLIENTS%% *}" "${ROWS_PER_TX##* }")"
done
report "$name" index
