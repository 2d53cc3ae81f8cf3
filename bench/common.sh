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
ROWS_PER_TX=${ROWS_PER_TX:-"1 10"}   # rows per transaction of the insert path; the last also
                                     # makes the concurrent index sizes
ROWS=${ROWS:-1000000}                # rows behind the index sizes
BURST=${BURST:-3000000}              # ids of one burst
BURST_ROUNDS=${BURST_ROUNDS:-3}      # rounds of the burst section
LOW_LEAD=${LOW_LEAD:-50}             # the lower snowflake.max_lead_ms of the burst section
KEY_ROWS=${KEY_ROWS:-10000000}       # rows of one load in the keys section
KEY_ROUNDS=${KEY_ROUNDS:-3}          # rounds of the keys section
DENSITY_ROWS=${DENSITY_ROWS:-200000} # rows of one cell of the density section, one a transaction
DENSITY_BATCH_ROWS=${DENSITY_BATCH_ROWS:-1000000} # the same, in transactions of DENSITY_BATCH rows
DENSITY_ORDER_ROWS=${DENSITY_ORDER_ROWS:-80000}   # rows of each key of the density section's order
# The writer counts of the density section: 1 to 8, and twice as many again while the
# machine has a core for each (16 on 16 cores), so that every writer can run at once.
density_writers="1 2 4 8"
for ((w = 16; w <= $(nproc); w *= 2)); do density_writers+=" $w"; done
DENSITY_WRITERS=${DENSITY_WRITERS:-$density_writers}
DURABLE=${DURABLE:-0}                # 1: durable commits (fsync, full_page_writes, synchronous_commit)
[[ $DURABLE == [01] ]] || { echo "DURABLE is 0 or 1, not $DURABLE" >&2; exit 2; }
# The sections of a run: with durable commits, the insert path's rates alone (the index sizes
# do not depend on them); the keys and density sections (bench/keys.sh, bench/density.sh)
# run only when named.
DEFAULT_SECTIONS="calls insert index scale bursts layouts"
if ((DURABLE)); then DEFAULT_SECTIONS=insert; fi
SECTIONS=${SECTIONS:-$DEFAULT_SECTIONS}
SCALE_BATCH=100000                   # ids per scale transaction
DENSITY_BATCH=1000                   # rows per batch transaction of the density section
DEFAULT_LEAD=1000 MAX_LEAD=60000     # snowflake.max_lead_ms of a stock server, and its largest

# The cluster settings, the same for every candidate (docs/performance.md, "Method"): commits
# that wait for no disk (or, with DURABLE=1, durable ones); no checkpoint or autovacuum on
# its own in one candidate's run and not another's, no JIT compile and no parallel plan.
durability=off
if ((DURABLE)); then durability=on; fi
BENCH_SETTINGS=(shared_buffers=256MB "fsync=$durability" "full_page_writes=$durability"
  "synchronous_commit=$durability" max_wal_size=4GB checkpoint_timeout=1h autovacuum=off jit=off
  max_parallel_workers_per_gather=0)

note() { echo "[$1 $(date +%T)] ${*:2}" >&2; } # NAME TEXT: progress, kept out of the report

# rotate R ITEMS...: the items, one a line, starting at the (R-1)-th and wrapping around:
# round 1 runs the candidates in their order, round 2 from the second, and so on.
rotate() {
  local r=$1 i; shift
  local items=("$@")
  for ((i = 0; i < $#; i++)); do echo "${items[(r - 1 + i) % $#]}"; done
}

has_uuidv7() { [[ $(sql "$1" "SELECT to_regprocedure('uuidv7()') IS NOT NULL") == t ]]; }

# key_tables NAME: the key defaults of the insert path, as their tables t_NAME of
# bench/setup.sql are named, one a line: uuidv7 only where the server has uuidv7().
key_tables() {
  printf '%s\n' snowflake bigserial uuid
  if has_uuidv7 "$1"; then echo uuidv7; fi
}

# insert_script NAME TABLE N: writes a pgbench script inserting N rows into t_TABLE in one
# statement (VALUES for one row) into cluster NAME's directory, and prints its path.
insert_script() {
  local file
  file=$(cluster_dir "$1")/insert_$2_$3.sql
  if (($3 == 1)); then
    echo "INSERT INTO t_$2 (payload) VALUES (1);"
  else
    echo "INSERT INTO t_$2 (payload) SELECT 1 FROM generate_series(1, $3);"
  fi >"$file"
  echo "$file"
}

# index_size NAME TABLE: the size in bytes of t_TABLE's primary-key index.
index_size() { sql "$1" "SELECT pg_relation_size('t_${2}_pkey')"; }

# concurrent_index NAME TABLE ROWS CLIENTS N: the size of t_TABLE's primary-key index after
# pgbench, CLIENTS clients of N-row transactions, inserted ROWS rows (rounded down to whole
# transactions per client) into the emptied table.
concurrent_index() {
  sql "$1" "TRUNCATE t_$2"
  tps "$1" "$4" -f "$(insert_script "$1" "$2" "$5")" -t $(($3 / ($4 * $5))) >/dev/null
  index_size "$1" "$2"
}

# library V: the snowflake_pg library installed into PostgreSQL V, as the report names it:
# its size, when it was installed, and whether it is a release build. A debug build (what
# `cargo pgrx test` installs) has a .debug_info section, which the release profile leaves out.
library() {
  local file build=release
  file=$("$(pg_config_of "$1")" --pkglibdir)/snowflake_pg.so || return 1
  if readelf -S "$file" | grep -q '\.debug_info'; then build="DEBUG (not a release build)"; fi
  echo "snowflake_pg.so, $(stat -c %s "$file") bytes, installed $(date -u -r "$file" '+%Y-%m-%d %H:%M:%S UTC'), $build"
}

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
# the samples with the sizes as psql variables (:calls, :rounds, ...; :tx_rows the last of
# ROWS_PER_TX, :clients the first of CLIENTS: those of the concurrent index sizes).
report() {
  cluster_psql "$1" -qAt -f "$BENCH_DIR/$2.sql" -v calls="$CALLS" -v rounds="$ROUNDS" \
    -v pgbench_rounds="$PGBENCH_ROUNDS" -v duration="$DURATION" -v rows="$ROWS" \
    -v tx_rows="${ROWS_PER_TX##* }" -v burst="$BURST" -v burst_rounds="$BURST_ROUNDS" \
    -v scale_batch="$SCALE_BATCH" -v default_lead="$DEFAULT_LEAD" -v max_lead="$MAX_LEAD" \
    -v key_rows="$KEY_ROWS" -v key_rounds="$KEY_ROUNDS" -v clients="${CLIENTS%% *}" \
    -v density_rows="$DENSITY_ROWS" -v density_batch_rows="$DENSITY_BATCH_ROWS" \
    -v density_batch="$DENSITY_BATCH" -v density_order_rows="$DENSITY_ORDER_ROWS"
}
