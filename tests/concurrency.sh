#!/usr/bin/env bash
# Many backends minting at once into one primary key: pgbench with 16 clients, then again
# with a new connection for every transaction (-C) so backend slots change hands all the
# time. Passes when no transaction fails and every row arrived; the primary key rejects
# any duplicate id. Runs on a stock server, or with `preload` on one that preloads the
# library (slot marks in shared memory), or with `gene` on one that also has a gene layout
# with 4 sequence bits: 16 ids per ms per backend, so every client borrows ticks and meets
# the lead bound, and each id carries its client's number in its gene. Each row also
# records its transaction and a sequence number drawn as it is inserted, so that the
# README's order promises are checked under concurrency: the ids of every statement rise
# in row order, and those of every session (a client of the persistent run) across its
# statements; and, but on the gene layout (whose sequence sits below node and slot), ids of
# different sessions sort by their minting time (docs/design.md, "Order"): 8 clients insert
# one row a transaction, each id beside the clock_timestamp() read right after it.
# Usage: bash tests/concurrency.sh 15|16|17|18 [preload|gene]   (extension installed)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
version=${1:?usage: concurrency.sh 15|16|17|18 [preload|gene]}
pg_major "$version" >/dev/null
mode=${2:-stock}
name=concurrency$version-$mode port=$((5430 + version)) clients=16 rows_per_tx=10
case $mode in
  stock) cluster_start "$name" "$version" "$port" ;;
  preload) cluster_start "$name" "$version" "$port" shared_preload_libraries=snowflake_pg ;;
  gene) cluster_start "$name" "$version" "$port" shared_preload_libraries=snowflake_pg \
    "snowflake.layout='time:41, node:2, slot:8, sequence:4, gene:8'" ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
trap 'cluster_stop "$name"' EXIT

sql "$name" "CREATE EXTENSION snowflake_pg"
sql "$name" "CREATE TABLE minted (id bigint PRIMARY KEY DEFAULT snowflake_next(), client int NOT NULL,
  tx xid8 NOT NULL DEFAULT pg_current_xact_id(), inserted bigserial)"
script=$CLUSTERS_DIR/$name/insert.sql
if [[ $mode == gene ]]; then
  echo "INSERT INTO minted SELECT snowflake_next(:client_id), :client_id FROM generate_series(1, $rows_per_tx);" >"$script"
else
  echo "INSERT INTO minted (client) SELECT :client_id FROM generate_series(1, $rows_per_tx);" >"$script"
fi

# out_of_order PARTITION: rows whose id is not above the id of the row inserted before them
# in the same PARTITION of the table (a transaction's rows are its one statement's).
out_of_order() {
  sql "$name" "SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY $1 ORDER BY inserted) AS before
    FROM minted) rows WHERE id <= before"
}

expected=0
run() { # run LABEL TRANSACTIONS_PER_CLIENT [pgbench options]
  local label=$1 tx=$2 result failed rows; shift 2
  result=$(pgbench_run "$name" -c "$clients" -j 2 -t "$tx" -f "$script" "$@") ||
    { echo "FAIL $label: pgbench reported errors"; return 1; }
  read -r _ _ failed <<<"$result"
  expected=$((expected + clients * tx * rows_per_tx))
  rows=$(sql "$name" "SELECT count(*) FROM minted")
  if [[ $rows != "$expected" || $failed != 0 ]]; then
    echo "FAIL $label: $rows rows, expected $expected; $failed failed transactions"
    return 1
  fi
  local unordered said="every statement's ids rising in row order"
  unordered=$(out_of_order tx)
  [[ $unordered == 0 ]] || { echo "FAIL $label: $unordered ids below the one before in their statement"; return 1; }
  if [[ $label == persistent ]]; then # the first run: so far each client is one session
    unordered=$(out_of_order client)
    [[ $unordered == 0 ]] || { echo "FAIL $label: $unordered ids below the one before in their session"; return 1; }
    said+=", every session's across its statements"
  fi
  if [[ $mode == gene ]]; then
    lost=$(sql "$name" "SELECT count(*) FROM minted WHERE (snowflake_parse(id)).gene <> client")
    [[ $lost == 0 ]] || { echo "FAIL $label: $lost ids lost their client's number in the gene"; return 1; }
  fi
  echo "ok $mode server, $label: $clients clients, $((clients * tx)) transactions, $rows rows so far, 0 failed, 0 duplicates, $said"
}
run persistent 500
run reconnecting 150 -C

# The order of ids across sessions: sorted by id, the share of neighbouring rows whose clock
# reads go back by more than 0.1 ms. The promise is the clock's resolution less what
# scheduling allows; a session preempted between its id and its clock read (two busy
# cores here) accounts for the few that do, where 0.3.0's order made 16% of them.
[[ $mode == gene ]] && exit 0
sql "$name" "CREATE TABLE clocked (id bigint PRIMARY KEY DEFAULT snowflake_next(),
  at timestamptz NOT NULL DEFAULT clock_timestamp())"
echo "INSERT INTO clocked DEFAULT VALUES;" >"$script"
pgbench_run "$name" -c 8 -j 2 -t 2000 -f "$script" >/dev/null || { echo "FAIL order: pgbench reported errors"; exit 1; }
IFS="|" read -r rows back <<<"$(ids_out_of_clock_order "$name" clocked)"
[[ $rows == 16000 ]] || { echo "FAIL order: $rows rows, expected 16000"; exit 1; }
if ((back * 50 > rows)); then
  echo "FAIL order: $back of $rows neighbours sorted by id read the clock more than 0.1 ms apart in the wrong order (at most 2%)"
  exit 1
fi
echo "ok $mode server, order: 8 clients, 16000 single-row transactions; sorted by id, $back neighbours read the clock more than 0.1 ms apart in the wrong order (at most 2%)"
