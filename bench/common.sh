# shellcheck shell=bash disable=SC2034 # the sizes are for the sections
# Shared by the benchmark driver (bench/run.sh) and its sections: the toolkit, the sizes,
# and how a section takes its samples. A section is `bash bench/SECTION.sh CLUSTER`: it
# runs its rounds against the bench cluster, keeps every sample in the table samples
# there (bench/setup.sql), and prints its part of the report with bench/SECTION.sql.

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
BENCH_DIR=$SNOWFLAKE_PG_ROOT/bench

# Sizes, from the environment (defaults here; see docs/performance.md).
ROUNDS=${ROUNDS:-7}                  # rounds of the call-cost section
CALLS=${CALLS:-2000000}              # calls per candidate and round in the call-cost section
PGBENCH_ROUNDS=${PGBENCH_ROUNDS:-3}  # rounds of the pgbench sections (insert path, scale)
DURATION=${DURATION:-10}             # seconds of each pgbench run
CLIENTS=${CLIENTS:-"2 8"}            # client counts of the insert path
ROWS=${ROWS:-1000000}                # rows behind the index sizes
BURST=${BURST:-3000000}              # ids of one burst
BURST_ROUNDS=${BURST_ROUNDS:-3}      # rounds of the burst section
LOW_LEAD=${LOW_LEAD:-50}             # the lower snowflake.max_lead_ms of the burst section
SECTIONS=${SECTIONS:-calls insert scale bursts layouts}
ROWS_PER_TX=10 SCALE_BATCH=100000    # rows per insert transaction, ids per scale transaction
DEFAULT_LEAD=1000 MAX_LEAD=60000     # snowflake.max_lead_ms of a stock server, and its largest

note() { echo "[$1 $(date +%T)] ${*:2}" >&2; } # NAME TEXT: progress, kept out of the report

# rotate R ITEMS...: the items, one a line, starting at the (R-1)-th and wrapping around:
# round 1 runs the candidates in their order, round 2 from the second, and so on.
rotate() {
  local r=$1 i; shift
  local items=("$@")
  for ((i = 0; i < $#; i++)); do echo "${items[(r - 1 + i) % $#]}"; done
}

has_uuidv7() { [[ $(sql "$1" "SELECT to_regprocedure('uuidv7()') IS NOT NULL") == t ]]; }

# sample NAME SECTION CANDIDATE CLIENTS ROUND VALUE: keeps one sample.
sample() {
  sql "$1" "INSERT INTO samples (section, candidate, clients, round, value)
    VALUES (\$q\$$2\$q\$, \$q\$$3\$q\$, $4, $5, $6)"
}

# tps NAME CLIENTS [pgbench args...]: the tps of one pgbench -M prepared run (as many
# threads as clients, up to the cores), connection time left out; fails if a transaction did.
tps() {
  local name=$1 clients=$2 cores result tps failed; shift 2
  cores=$(nproc)
  result=$(pgbench_run "$name" -M prepared -c "$clients" -j $((clients < cores ? clients : cores)) "$@") || return 1
  read -r tps _ failed <<<"$result"
  ((failed == 0)) || { echo "pgbench: $failed failed transactions" >&2; return 1; }
  echo "$tps"
}

# report NAME SECTION: prints the section's part of the report, bench/SECTION.sql run on
# the samples with the sizes as psql variables (:calls, :rounds, ...).
report() {
  cluster_psql "$1" -qAt -f "$BENCH_DIR/$2.sql" -v calls="$CALLS" -v rounds="$ROUNDS" \
    -v pgbench_rounds="$PGBENCH_ROUNDS" -v duration="$DURATION" -v rows="$ROWS" \
    -v rows_per_tx="$ROWS_PER_TX" -v burst="$BURST" -v burst_rounds="$BURST_ROUNDS" \
    -v scale_batch="$SCALE_BATCH" -v default_lead="$DEFAULT_LEAD" -v max_lead="$MAX_LEAD"
}
