#!/usr/bin/env bash
# The first call of a backend: what `snowflake_next()` costs the first time in a session
# (the generator made, the node id settled and claimed, and with preload a minting slot
# taken), against the second call of the same session. On a stock server, on one that
# preloads the library (max_connections = 400), and on that one again with 250 of its 256
# slots held by other sessions, so that taking a slot passes over the held ones. SESSIONS
# new sessions each; psql's \timing of each call, the medians in the report.
# Usage: bash bench/first_call.sh [15|18]   (15 by default); SESSIONS [300]
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
version=${1:-15}
sessions=${SESSIONS:-300}
results=$SNOWFLAKE_PG_ROOT/bench/results/first-call-pg$version.txt
port=$((5890 + version % 10))
name=firstcall$version
trap 'cluster_stop "$name" 2>/dev/null || true' EXIT

# median FILE COLUMN: the median of a column of FILE (ms), or of the first minus the
# second (COLUMN d), in microseconds.
median() {
  awk -v column="$2" '{ print (column == "d" ? $1 - $2 : $column) * 1000 }' "$1" | sort -g |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# medians LABEL: SESSIONS new sessions, each timing its first and second call; prints the
# median of each and of their difference, in microseconds.
medians() {
  local times=$CLUSTERS_DIR/$name/times.txt i
  : >"$times"
  for ((i = 0; i < sessions; i++)); do
    cluster_psql "$name" -qAt -c '\timing on' -c 'SELECT snowflake_next()' -c 'SELECT snowflake_next()' |
      sed -n 's/^Time: \([0-9.]*\) ms$/\1/p' | paste -sd' ' >>"$times"
  done
  printf "  %-44s %9.1f %9.1f %9.1f\n" "$1" "$(median "$times" 1)" "$(median "$times" 2)" \
    "$(median "$times" d)"
}

{
  echo "snowflake_pg's first call on PostgreSQL $version ($("$(pg_bin_of "$version")/postgres" --version))"
  printf '%s\n' "$sessions new sessions each; median microseconds of psql's \\timing (client round trip included)"
  printf "  %-44s %9s %9s %9s\n" server "1st call" "2nd call" "1st - 2nd"
  cluster_start "$name" "$version" "$port"
  sql "$name" "CREATE EXTENSION snowflake_pg"
  medians "stock (slot = process number)"
  cluster_stop "$name"
  cluster_start "$name" "$version" "$port" shared_preload_libraries=snowflake_pg max_connections=400
  sql "$name" "CREATE EXTENSION snowflake_pg"
  medians "preload, slots by need, none held"
  pgbench_run "$name" --aborts -c 250 -j 2 -T 600 \
    -f <(printf 'SELECT snowflake_next();\nSELECT pg_sleep(600);\n') >/dev/null 2>&1 &
  holders=$!
  until [[ $(sql "$name" "SELECT backends_minting FROM snowflake_status") -ge 250 ]]; do sleep 0.2; done
  medians "preload, 250 of 256 slots held by others"
  kill "$holders" 2>/dev/null || true
} | tee "$results"
