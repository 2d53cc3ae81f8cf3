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
# statements.
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
