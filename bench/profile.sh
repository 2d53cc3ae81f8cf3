#!/usr/bin/env bash
# Instruction counts of the hot path, with callgrind. Timings move with the machine;
# instruction counts do not, so this is how a change to snowflake_next() is judged. Each
# candidate runs CALLS and then 2 x CALLS times in a single-user backend, with callgrind
# collecting only inside the candidate's own C function (everything it calls included,
# the executor's work around it left out); the difference of the two runs divided by
# CALLS is the cost of one call, with the first call's set-up (loading the library,
# reading the settings) cancelled out. Then the callgrind report of snowflake_next():
# where its instructions go.
# Usage: bash bench/profile.sh [15|18]   (15 by default; needs valgrind, which
# scripts/setup.sh does not install: apt-get install valgrind)
# CALLS [100000] sets N; SYMBOLS, C function names, limits the candidates.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

version=${1:-15}
CALLS=${CALLS:-100000}
need_valgrind
bin=$(pg_bin_of "$version")
dir=$CLUSTERS_DIR/profile$version
results=$SNOWFLAKE_PG_ROOT/bench/results/profile-pg$version.txt
cluster_init "profile$version" "$version" # never started: single-user backends only
single() { as_pg "$bin/postgres" --single -D "$dir/data" -c jit=off postgres; }
single >/dev/null 2>"$dir/single.log" <<<"CREATE EXTENSION snowflake_pg; CREATE SEQUENCE s;"

# callgrind_run SYMBOL EXPR N OUT: count(EXPR) over N rows, collected inside SYMBOL only.
callgrind_run() {
  local symbol=$1 expr=$2 n=$3 out=$4
  as_pg valgrind --tool=callgrind --toggle-collect="$symbol" --callgrind-out-file="$out" \
    "$bin/postgres" --single -D "$dir/data" -c jit=off postgres \
    <<<"SELECT count($expr) FROM generate_series(1, $n) g;" >/dev/null 2>"$dir/valgrind.log" ||
    { cat "$dir/valgrind.log" >&2; return 1; }
}
total() { callgrind_annotate "$1" | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,; }

# C function: SQL call. nextval('s') calls nextval(regclass), whose C function is nextval_oid.
declare -A exprs=([snowflake_next]='snowflake_next()' [clock_timestamp]='clock_timestamp()'
  [nextval_oid]="nextval('s')" [gen_random_uuid]='gen_random_uuid()' [uuidv7]='uuidv7()')
read -ra symbols <<<"${SYMBOLS:-snowflake_next clock_timestamp nextval_oid gen_random_uuid}"
((version >= 18)) && [[ -z ${SYMBOLS:-} ]] && symbols+=(uuidv7)
{
  echo "snowflake_pg instruction counts on PostgreSQL $version ($("$bin/postgres" --version))"
  echo "valgrind --tool=callgrind --toggle-collect=FUNCTION, SELECT count(f) FROM generate_series(1, N):"
  echo "instructions per call = (Ir at N = $((2 * CALLS)) - Ir at N = $CALLS) / $CALLS"
  printf '  %-20s %14s %14s %10s\n' function "Ir, N=$CALLS" "Ir, N=$((2 * CALLS))" 'Ir/call'
  for symbol in "${symbols[@]}"; do
    callgrind_run "$symbol" "${exprs[$symbol]}" "$CALLS" "$dir/cg.$symbol.1"
    callgrind_run "$symbol" "${exprs[$symbol]}" $((2 * CALLS)) "$dir/cg.$symbol.2"
    one=$(total "$dir/cg.$symbol.1") two=$(total "$dir/cg.$symbol.2")
    printf '  %-20s %14d %14d %10.1f\n' "$symbol" "$one" "$two" "$(awk -v a="$one" -v b="$two" -v n="$CALLS" 'BEGIN { print (b - a) / n }')"
  done
  echo
  # The first call's set-up (loading the library, settling and claiming the node id
  # through SQL) runs hundreds of functions once each: the first 12 lines are the calls'.
  echo "where snowflake_next()'s instructions go, N = $((2 * CALLS)) (self cost of each function, the first call's set-up included; the 12 largest):"
  callgrind_annotate "$dir/cg.snowflake_next.2" | sed -n '/file:function/,/^$/p' | sed '/^$/d' | sed -n 1,14p # reads it all: head's early exit would fail the pipe
} | tee "$results"
echo "written to ${results#"$SNOWFLAKE_PG_ROOT"/}" >&2
