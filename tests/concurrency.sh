#!/usr/bin/env bash
# Many backends minting at once into one primary key: pgbench with 16 clients, then again
# with a new connection for every transaction (-C) so backend slots change hands all the
# time. Passes when no transaction fails and every row arrived; the primary key rejects
# any duplicate id. Runs on a stock server, or with `preload` on one that preloads the
# library (slot marks in shared memory).
# Usage: bash tests/concurrency.sh 15|18 [preload]   (extension installed)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
version=${1:?usage: concurrency.sh 15|18 [preload]}
mode=${2:-stock}
name=concurrency$version-$mode port=$((5430 + version)) clients=16 rows_per_tx=10
case $mode in
  stock) cluster_start "$name" "$version" "$port" ;;
  preload) cluster_start "$name" "$version" "$port" shared_preload_libraries=snowflake_pg ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
trap 'cluster_stop "$name" "$version"' EXIT
sql() { cluster_psql "$name" "$version" "$port" -qAt -c "$1"; }

sql "CREATE EXTENSION snowflake_pg"
sql "CREATE TABLE minted (id bigint PRIMARY KEY DEFAULT snowflake_next(), client int NOT NULL)"
script=$CLUSTERS_DIR/$name/insert.sql
echo "INSERT INTO minted (client) SELECT :client_id FROM generate_series(1, $rows_per_tx);" >"$script"

expected=0
run() { # run LABEL TRANSACTIONS_PER_CLIENT [pgbench options]
  local label=$1 tx=$2; shift 2
  local out=$CLUSTERS_DIR/$name/pgbench-$label.log
  if ! "$(pg_bin_of "$version")/pgbench" -n -h "$CLUSTERS_DIR/$name" -p "$port" -U postgres \
      -c "$clients" -j 2 -t "$tx" -f "$script" "$@" postgres >"$out" 2>&1; then
    cat "$out"; echo "FAIL $label: pgbench reported errors"; return 1
  fi
  expected=$((expected + clients * tx * rows_per_tx))
  local rows failed
  rows=$(sql "SELECT count(*) FROM minted")
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
  if [[ $rows != "$expected" || ${failed:-0} != 0 ]]; then
    cat "$out"; echo "FAIL $label: $rows rows, expected $expected; ${failed:-0} failed transactions"
    return 1
  fi
  echo "ok $mode server, $label: $clients clients, $((clients * tx)) transactions, $rows rows so far, 0 failed, 0 duplicates"
}
run persistent 1000
run reconnecting 300 -C

