#!/usr/bin/env bash
# Layouts for big clusters: 16 and 64 nodes, each with 256 backend slots (a stock server
# needs 122 on PostgreSQL 15 to 17, 136 on 18), the sequence paying for the node bits. A server
# with the last node id of each mints under concurrency, every id parses to that node,
# and a burst from one backend shows what the smaller sequence costs: ids per ms.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
port=$((port_base + 43)) burst=1000000

# cluster_of NODES LAYOUT: one server of such a cluster, checked.
cluster_of() {
  local nodes=$1 spec=$2 name=big$version-$1 last=$(($1 - 1)) per_ms figures
  start "$name" "$port" shared_preload_libraries=snowflake_pg "snowflake.layout='$spec'" \
    "snowflake.node_id=$last"
  per_ms=$((1 << (22 - $(bits_of node "$spec") - $(bits_of slot "$spec"))))
  sql "$name" "CREATE EXTENSION snowflake_pg" \
    -c "CREATE TABLE minted (id bigint PRIMARY KEY DEFAULT snowflake_next(), client int)"
  read -r _ transactions failed < <(pgbench_run "$name" -c 8 -j 2 -T 3 \
    -f <(echo "INSERT INTO minted (client) VALUES (:client_id)"))
  ((failed == 0)) || fail "$nodes nodes: $failed failed transactions"
  [[ $(check_distinct "$name" minted) == "$transactions" ]] || fail "$nodes nodes: rows lost"
  [[ $(sql "$name" "SELECT count(*) FROM minted WHERE (snowflake_parse(id)).node_id <> $last") == 0 ]] ||
    fail "$nodes nodes: an id does not parse to node $last"
  # One backend, one statement: the sequence holds per_ms ids a tick, then borrows ticks
  # ahead (within max_lead_ms) and waits for the clock.
  figures=$(sql "$name" "CREATE TEMP TABLE b AS SELECT snowflake_next() AS id FROM generate_series(1, $burst)" \
    -c "SELECT count(DISTINCT id), (max((snowflake_parse(id)).ts) - min((snowflake_parse(id)).ts)) FROM b")
  IFS='|' read -r distinct span <<<"$figures"
  ((distinct == burst)) || fail "$nodes nodes: the burst minted $distinct distinct ids of $burst"
  figure "$nodes nodes ($spec): 256 slots, node $last; 8 clients for 3 s, $transactions rows, 0 duplicates; one backend holds $per_ms ids per ms, a burst of $burst ids spans $span of id time"
  check_log "$name"
  cluster_stop "$name"
}

# bits_of FIELD LAYOUT: the width of FIELD in a layout spec.
bits_of() { sed -E "s/.*$1:([0-9]+).*/\1/" <<<"$2"; }

cluster_of 16 'time:41, sequence:10, node:4, slot:8'
cluster_of 64 'time:41, sequence:8, node:6, slot:8'
