#!/usr/bin/env bash
# Benchmarks of snowflake_pg against the usual ways to make keys, on a fresh cluster per
# PostgreSQL version:
#   1. call cost: N calls in one backend of snowflake_next(), clock_timestamp(), nextval(),
#      gen_random_uuid(), an Instagram-style PL/pgSQL next_id() and (18) uuidv7();
#   2. insert path: pgbench inserting into tables keyed by each default, then the size of
#      the primary-key index after ROWS rows;
#   3. scale: ids per second of snowflake_next() (and clock_timestamp(), the machine's own
#      scaling) with 1 and 2 concurrent clients;
#   4. bursts: one statement minting BURST ids, with the default lead bound and a lower one.
# Every comparison runs in alternating rounds (round r runs every candidate once, in an
# order rotated by r) so a slow spell of the machine hits all candidates alike; the tables
# show medians and ratios of medians. Prints the report and writes it to
# bench/results/pgV.txt. Not part of tests/run.sh.
# Usage: bash bench/run.sh [15|18 ...]   (both by default; the extension installed)
# Sizes, from the environment (defaults in brackets):
#   ROUNDS [7]           rounds of the call-cost section
#   CALLS [2000000]      calls per candidate and round in the call-cost section
#   PGBENCH_ROUNDS [3]   rounds of the pgbench sections (insert path, scale)
#   DURATION [10]        seconds of each pgbench run
#   CLIENTS ["2 8"]      client counts of the insert path
#   ROWS [1000000]       rows behind the index sizes
#   BURST [3000000]      ids of one burst
#   BURST_ROUNDS [3]     rounds of the burst section
#   LOW_LEAD [50]        the lower snowflake.max_lead_ms of the burst section
#   SECTIONS ["calls insert scale bursts"]   which sections to run
# A quick check: CALLS=200000 ROUNDS=2 PGBENCH_ROUNDS=2 DURATION=3 ROWS=100000 BURST=300000
set -euo pipefail
# shellcheck source=../scripts/lib.sh source-path=SCRIPTDIR disable=SC1091 # -x follows it
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

ROUNDS=${ROUNDS:-7}
CALLS=${CALLS:-2000000}
PGBENCH_ROUNDS=${PGBENCH_ROUNDS:-3}
DURATION=${DURATION:-10}
CLIENTS=${CLIENTS:-"2 8"}
ROWS=${ROWS:-1000000}
BURST=${BURST:-3000000}
BURST_ROUNDS=${BURST_ROUNDS:-3}
LOW_LEAD=${LOW_LEAD:-50}
SECTIONS=${SECTIONS:-calls insert scale bursts}
ROWS_PER_TX=10      # rows per pgbench insert transaction
SCALE_BATCH=100000  # ids per pgbench transaction in the scale section
DEFAULT_LEAD=1000   # snowflake.max_lead_ms of a stock server
MAX_LEAD=60000      # its largest value

# The same settings for every candidate. fsync, full_page_writes and synchronous_commit
# are off so the insert path measures CPU work, not this machine's disk; no checkpoint or
# autovacuum starts by itself in the middle of a run; no JIT compile or parallel plan
# lands in one candidate's timing and not another's. work_mem stays at its default, as
# in the measurements of the tuning history.
SETTINGS=(shared_buffers=256MB fsync=off full_page_writes=off synchronous_commit=off
  max_wal_size=4GB checkpoint_timeout=1h autovacuum=off jit=off
  max_parallel_workers_per_gather=0)

versions=("$@")
((${#versions[@]})) || versions=(15 18)
results_dir=$SNOWFLAKE_PG_ROOT/bench/results
mkdir -p "$results_dir"
cores=$(nproc)

# The cluster of the version being measured, stopped on any exit.
name='' version='' port='' dir=''
cleanup() {
  if [[ -n $name ]]; then cluster_stop "$name" "$version" 2>/dev/null || true; fi
  rm -f "$results_dir"/pg*.txt.tmp
}
trap cleanup EXIT

note() { echo "[pg$version $(date +%T)] $*" >&2; }  # progress, kept out of the report
sql() { cluster_psql "$name" "$version" "$port" -qAt -c "$@"; }
pgbench() { "$(pg_bin_of "$version")/pgbench" -n -h "$dir" -p "$port" -U postgres "$@" postgres; }

# median VALUES...: the middle value, or the mean of the two middle ones.
median() {
  printf '%s\n' "$@" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# calc 'AWK STATEMENTS' [NAME=VALUE...]: floating-point arithmetic and printf formats,
# in awk, with the values passed as awk variables.
calc() {
  local program=$1 vars=() v; shift
  for v in "$@"; do vars+=(-v "$v"); done
  awk "${vars[@]}" "BEGIN { $program }"
}
# rotate R ITEMS...: the items starting at the R-th, wrapping around.
rotate() {
  local r=$1; shift
  local n=$# i
  local items=("$@")
  for ((i = 0; i < n; i++)); do echo "${items[(r + i) % n]}"; done
}

# pgbench_tps SCRIPT CLIENTS [pgbench args...]: the tps of one run, connection time left out.
pgbench_tps() {
  local script=$1 clients=$2; shift 2
  local log=$dir/pgbench.log threads=$((clients < cores ? clients : cores))
  pgbench -M prepared -c "$clients" -j "$threads" -f "$script" "$@" >"$log" 2>&1 ||
    { cat "$log" >&2; return 1; }
  if grep -q '^number of failed transactions: [1-9]' "$log"; then cat "$log" >&2; return 1; fi
  sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' "$log"
}

has_uuidv7() { [[ $(sql "SELECT to_regprocedure('uuidv7()') IS NOT NULL") == t ]]; }

setup() {
  cluster_start "$name" "$version" "$port" "${SETTINGS[@]}"
  sql "CREATE EXTENSION snowflake_pg" >/dev/null ||
    { echo "snowflake_pg is not installed into PostgreSQL $version (see scripts/setup.sh)" >&2; return 1; }
  cluster_psql "$name" "$version" "$port" -q <<'SQL'
CREATE SEQUENCE s;

-- The well-known Instagram recipe in PL/pgSQL: 41 bits of ms since an epoch (here
-- snowflake.epoch's 2020-01-01), 13 bits of shard id, 10 bits of a sequence mod 1024.
CREATE SEQUENCE next_id_seq;
CREATE FUNCTION next_id(OUT result bigint) LANGUAGE plpgsql AS $$
DECLARE
  our_epoch bigint := 1577836800000;
  seq_id bigint;
  now_millis bigint;
  shard_id int := 1;
BEGIN
  SELECT nextval('next_id_seq') % 1024 INTO seq_id;
  SELECT floor(extract(epoch FROM clock_timestamp()) * 1000) INTO now_millis;
  result := (now_millis - our_epoch) << 23;
  result := result | (shard_id << 10);
  result := result | seq_id;
END $$;

-- Server-side timing of one statement: the clock is read in the backend right before and
-- after the query, so neither the client round trip nor psql's output is in the figure.
-- Unlike EXPLAIN ANALYZE, nothing is added per row. Parsing and planning the dynamic
-- query is inside the timing, but takes tens of microseconds against hundreds of ms.
CREATE FUNCTION bench_ms(expr text, n bigint) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz;
  counted bigint;
BEGIN
  started := clock_timestamp();
  EXECUTE format('SELECT count(%s) FROM generate_series(1, %s) g', expr, n) INTO counted;
  RETURN extract(epoch FROM clock_timestamp() - started) * 1000;
END $$;

-- The insert path: one table per key default, the same payload.
CREATE TABLE t_snowflake (id bigint PRIMARY KEY DEFAULT snowflake_next(), payload int NOT NULL);
CREATE TABLE t_bigserial (id bigserial PRIMARY KEY, payload int NOT NULL);
CREATE TABLE t_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), payload int NOT NULL);
SQL
  if has_uuidv7; then
    sql "CREATE TABLE t_uuidv7 (id uuid PRIMARY KEY DEFAULT uuidv7(), payload int NOT NULL)"
  fi
}

header() {
  echo "snowflake_pg benchmarks on PostgreSQL $version"
  echo "date:        $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "kernel:      $(uname -r)"
  echo "cpu:         $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), nproc $cores"
  echo "load avg:    $(cut -d' ' -f1-3 /proc/loadavg) (at start)"
  echo "postgresql:  $(sql "SELECT version()")"
  echo "extension:   snowflake_pg $(sql "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'")"
  echo "parameters:  ROUNDS=$ROUNDS CALLS=$CALLS PGBENCH_ROUNDS=$PGBENCH_ROUNDS DURATION=$DURATION" \
    "CLIENTS=\"$CLIENTS\" ROWS=$ROWS BURST=$BURST BURST_ROUNDS=$BURST_ROUNDS LOW_LEAD=$LOW_LEAD" \
    "SECTIONS=\"$SECTIONS\""
  echo "settings:    ${SETTINGS[*]}"
}

# 1. Call cost. All rounds in one psql session, so one backend with its library loaded,
# its PL/pgSQL compiled and its caches warm; a short warm-up round goes first.
call_cost() {
  local names=(loop clock_timestamp snowflake_next nextval gen_random_uuid next_id)
  local -A expr=([loop]=g [clock_timestamp]='clock_timestamp()' [snowflake_next]='snowflake_next()'
    [nextval]="nextval('s')" [gen_random_uuid]='gen_random_uuid()' [next_id]='next_id()'
    [uuidv7]='uuidv7()')
  has_uuidv7 && names+=(uuidv7)
  local script=$dir/call_cost.sql out=$dir/call_cost.out r c
  {
    for c in "${names[@]}"; do
      echo "SELECT 0, '$c', bench_ms(\$q\$${expr[$c]}\$q\$, $((CALLS / 10 + 1)));"
    done
    for ((r = 1; r <= ROUNDS; r++)); do
      echo "\\warn [pg$version] call cost: round $r of $ROUNDS"
      for c in $(rotate "$r" "${names[@]}"); do
        echo "SELECT $r, '$c', bench_ms(\$q\$${expr[$c]}\$q\$, $CALLS);"
      done
    done
  } >"$script"
  cluster_psql "$name" "$version" "$port" -qAt -F ' ' -f "$script" >"$out"

  local -A ms
  for c in "${names[@]}"; do
    # shellcheck disable=SC2046 # one word per sample
    ms[$c]=$(median $(awk -v c="$c" '$1 > 0 && $2 == c { print $3 }' "$out"))
  done
  echo
  echo "1. Call cost: $CALLS calls in one backend, SELECT count(f) FROM generate_series(1, $CALLS) g;"
  echo "   median of $ROUNDS alternating rounds, timed in the server"
  printf '   %-24s %10s %9s %13s\n' candidate 'median ms' ns/call 'net ns/call'
  for c in "${names[@]}"; do
    local label=${expr[$c]}
    [[ $c == loop ]] && label='loop alone: count(g)'
    calc 'printf "   %-24s %10.1f %9.1f %13.1f\n", label, ms, ms * 1e6 / n, (ms - loop) * 1e6 / n' \
      label="$label" ms="${ms[$c]}" loop="${ms[loop]}" n="$CALLS"
  done
  echo
  echo "   ratios of median times (loop included)   ratio   target"
  local other target
  for other in clock_timestamp nextval gen_random_uuid uuidv7 next_id; do
    [[ -n ${ms[$other]:-} ]] || continue
    target=''
    case $version/$other in
      15/clock_timestamp) target=1.05 ;;
      15/nextval) target=0.42 ;;
      15/gen_random_uuid | 18/uuidv7) target=0.12 ;;
    esac
    calc 'r = a / b; verdict = t == "" ? "-" : ("<= " t (r <= t + 0 ? "  met" : "  MISSED"))
      printf "   %-40s %6.3f   %s\n", "snowflake_next() / " other, r, verdict' \
      a="${ms[snowflake_next]}" b="${ms[$other]}" t="$target" other="${expr[$other]}"
  done
}

# 2. Insert path. Each pgbench transaction inserts ROWS_PER_TX rows through the key
# default; every run starts on an empty table after a checkpoint.
insert_path() {
  local tables=(snowflake bigserial uuid) c r t
  local -A label=([snowflake]='snowflake_next()' [bigserial]=bigserial [uuid]='gen_random_uuid()'
    [uuidv7]='uuidv7()')
  has_uuidv7 && tables+=(uuidv7)
  for t in "${tables[@]}"; do
    echo "INSERT INTO t_$t (payload) SELECT 1 FROM generate_series(1, $ROWS_PER_TX);" >"$dir/insert_$t.sql"
  done
  echo
  echo "2. Insert path: pgbench -M prepared, $ROWS_PER_TX rows per transaction"
  echo "   (INSERT INTO t (payload) SELECT 1 FROM generate_series(1, $ROWS_PER_TX)), $DURATION s per run,"
  echo "   empty table at the start of each run; median of $PGBENCH_ROUNDS alternating rounds"
  printf '   %-20s %8s %10s %12s %14s\n' 'key default' clients 'median tps' 'rows/s' 'vs bigserial'
  for c in $CLIENTS; do
    local -A tps=() samples=()
    for ((r = 1; r <= PGBENCH_ROUNDS; r++)); do
      note "insert path, $c clients: round $r of $PGBENCH_ROUNDS"
      for t in $(rotate "$r" "${tables[@]}"); do
        sql "TRUNCATE t_$t" -c CHECKPOINT
        samples[$t]+=" $(pgbench_tps "$dir/insert_$t.sql" "$c" -T "$DURATION")"
      done
    done
    for t in "${tables[@]}"; do
      # shellcheck disable=SC2086 # one word per sample
      tps[$t]=$(median ${samples[$t]})
    done
    for t in "${tables[@]}"; do
      calc 'printf "   %-20s %8d %10.0f %12.0f %14.3f\n", label, c, tps, tps * rows, tps / base' \
        label="${label[$t]}" c="$c" tps="${tps[$t]}" rows="$ROWS_PER_TX" base="${tps[bigserial]}"
    done
  done

  # Index sizes. In bulk: one INSERT ... SELECT of ROWS rows in one backend, the keys in
  # the order they are made: right-leaning splits for all but gen_random_uuid(). And
  # concurrently: pgbench with the first client count of CLIENTS and the transactions
  # above, where ids from backends minting at the same time interleave in the index.
  local first_c=${CLIENTS%% *}
  local tx=$((ROWS / (first_c * ROWS_PER_TX)))
  local -A bulk=() conc=()
  note "index sizes"
  for t in "${tables[@]}"; do
    sql "TRUNCATE t_$t" -c "INSERT INTO t_$t (payload) SELECT 1 FROM generate_series(1, $ROWS)"
    bulk[$t]=$(sql "SELECT pg_relation_size('t_${t}_pkey')")
    sql "TRUNCATE t_$t"
    pgbench_tps "$dir/insert_$t.sql" "$first_c" -t "$tx" >/dev/null
    conc[$t]=$(sql "SELECT pg_relation_size('t_${t}_pkey')")
  done
  echo
  echo "   primary-key index size: bulk = one INSERT ... SELECT of $ROWS rows in one backend;"
  echo "   concurrent = pgbench, $first_c clients x $tx transactions of $ROWS_PER_TX rows ($((first_c * tx * ROWS_PER_TX)) rows)"
  printf '   %-20s %10s %12s %8s %12s %12s %8s\n' 'key default' bulk bytes ratio concurrent bytes ratio
  for t in "${tables[@]}"; do
    printf '   %-20s %10s %12d %8s %12s %12d %8s\n' "${label[$t]}" \
      "$(sql "SELECT pg_size_pretty(${bulk[$t]}::bigint)")" "${bulk[$t]}" \
      "$(calc 'printf "%.3f", a / b' a="${bulk[$t]}" b="${bulk[bigserial]}")" \
      "$(sql "SELECT pg_size_pretty(${conc[$t]}::bigint)")" "${conc[$t]}" \
      "$(calc 'printf "%.3f", a / b' a="${conc[$t]}" b="${conc[bigserial]}")"
  done
  echo "   (ratio: size / bigserial's size)"
}

# 3. Scale: ids per second with 1 and 2 clients, each its own backend and generator.
# clock_timestamp() is the reference: how well the machine itself scales the same loop.
# One backend mints at most 4,096 ids per ms once it is snowflake.max_lead_ms ahead of
# the clock, and at the default bound of 1 s a backend minting faster than that gets
# there within seconds: the figures would show the clock, not the CPU. So the bound is
# raised to its maximum for this section, and section 4 shows the bound at work.
scale() {
  local exprs=('snowflake_next()' 'clock_timestamp()') runs=() run r e k
  local -A samples=() tps=()
  for e in "${!exprs[@]}"; do
    echo "SELECT count(${exprs[$e]}) FROM generate_series(1, $SCALE_BATCH);" >"$dir/scale_$e.sql"
    runs+=("$e:1" "$e:2")
  done
  set_lead "$MAX_LEAD"
  for ((r = 1; r <= PGBENCH_ROUNDS; r++)); do
    note "scale: round $r of $PGBENCH_ROUNDS"
    for run in $(rotate "$r" "${runs[@]}"); do
      samples[$run]+=" $(pgbench_tps "$dir/scale_${run%:*}.sql" "${run#*:}" -T "$DURATION")"
    done
  done
  set_lead "$DEFAULT_LEAD"
  for run in "${runs[@]}"; do
    # shellcheck disable=SC2086 # one word per sample
    tps[$run]=$(median ${samples[$run]})
  done
  echo
  echo "3. Scale: pgbench -M prepared, SELECT count(f) FROM generate_series(1, $SCALE_BATCH) per transaction,"
  echo "   $DURATION s per run; median of $PGBENCH_ROUNDS alternating rounds; ids/s = tps x $SCALE_BATCH."
  echo "   snowflake.max_lead_ms = $MAX_LEAD here, so the figures are the CPU's: at the default $DEFAULT_LEAD ms a"
  echo "   backend is held to 4,096 ids per ms (4.1M ids/s) once it is that far ahead (section 4)."
  printf '   %-20s %8s %14s %14s %8s   %s\n' function clients ids/s 'per client' '2 / 1' target
  for e in "${!exprs[@]}"; do
    for k in 1 2; do
      calc 'v = tps * batch; line = sprintf("   %-20s %8d %14.0f %14.0f", f, k, v, v / k)
        r = tps / one; verdict = (e == 0) ? ("   >= 1.7" (r >= 1.7 ? "  met" : "  MISSED")) : ""
        if (k == 2) line = line sprintf(" %8.2f%s", r, verdict)
        print line' \
        tps="${tps[$e:$k]}" one="${tps[$e:1]}" batch="$SCALE_BATCH" k="$k" e="$e" f="${exprs[$e]}"
    done
  done
}

# set_lead MS: snowflake.max_lead_ms for new sessions. It is a reload setting; the
# session must load the library to know it. Waits until a new session sees the value.
set_lead() {
  local i
  sql "LOAD 'snowflake_pg'" -c "ALTER SYSTEM SET snowflake.max_lead_ms = $1" -c "SELECT pg_reload_conf()" >/dev/null
  for ((i = 0; i < 100; i++)); do
    [[ $(sql "LOAD 'snowflake_pg'" -c "SELECT setting FROM pg_settings WHERE name = 'snowflake.max_lead_ms'") == "$1" ]] &&
      return 0
    sleep 0.05
  done
  echo "snowflake.max_lead_ms did not become $1" >&2
  return 1
}

# burst: one statement of BURST ids in a new backend; prints "elapsed_ms lead_ms", the
# lead being how far the last id's millisecond is ahead of the clock when the statement
# ends (the ids are increasing, so the last is the max), or "error: TEXT".
burst() {
  local out
  if out=$(sql "LOAD 'snowflake_pg'" -c "SELECT
        round(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000, 1),
        round(extract(epoch FROM (snowflake_parse(max(id))).ts - clock_timestamp()) * 1000, 1)
      FROM (SELECT snowflake_next() AS id FROM generate_series(1, $BURST)) s" 2>&1); then
    echo "${out//|/ }"
  else
    out=$(grep -m1 ERROR <<<"$out" || echo "$out")
    echo "error: ${out#*ERROR:  }"
  fi
}

# 4. Bursts and the lead bound, alternating the bound from round to round.
bursts() {
  local bounds=("$DEFAULT_LEAD" "$LOW_LEAD") r b
  local -A elapsed=() lead=() errors=()
  for ((r = 1; r <= BURST_ROUNDS; r++)); do
    note "bursts: round $r of $BURST_ROUNDS"
    for b in $(rotate "$r" "${bounds[@]}"); do
      set_lead "$b"
      local result
      result=$(burst)
      if [[ $result == error:* ]]; then
        errors[$b]=$result
      else
        elapsed[$b]+=" ${result% *}"
        lead[$b]+=" ${result#* }"
      fi
    done
  done
  set_lead "$DEFAULT_LEAD"
  echo
  echo "4. Bursts: SELECT ... FROM (SELECT snowflake_next() FROM generate_series(1, $BURST)) in one backend;"
  echo "   median of $BURST_ROUNDS alternating rounds. The ceiling is 4,096 ids per ms per backend, about"
  echo "   4.1M ids/s: a backend minting faster borrows later milliseconds and runs ahead of the"
  echo "   clock, up to snowflake.max_lead_ms, then sleeps a millisecond at a time. $BURST ids"
  echo "   span $(calc 'printf "%.0f", n / 4096' n="$BURST") ms of the clock. Elapsed: the whole statement, generate_series included."
  printf '   %-22s %10s %12s %24s\n' snowflake.max_lead_ms 'elapsed ms' ids/s 'last id ahead of clock'
  for b in "${bounds[@]}"; do
    if [[ -n ${elapsed[$b]:-} ]]; then
      local e l
      # shellcheck disable=SC2086 # one word per sample
      e=$(median ${elapsed[$b]}) l=$(median ${lead[$b]})
      calc 'printf "   %-22s %10.1f %12.0f %21.1f ms\n", b " ms", e, n / e * 1000, l' b="$b" e="$e" l="$l" n="$BURST"
    fi
    if [[ -n ${errors[$b]:-} ]]; then
      printf '   %-22s %s\n' "$b ms" "${errors[$b]}"
    fi
  done
}

for version in "${versions[@]}"; do
  pg_bin_of "$version" >/dev/null
  name=bench$version port=$((5700 + version)) dir=$CLUSTERS_DIR/bench$version
  results=$results_dir/pg$version.txt
  started=$SECONDS
  note "starting a cluster on port $port"
  setup
  {
    header
    for section in $SECTIONS; do
      case $section in
        calls) call_cost ;;
        insert) insert_path ;;
        scale) scale ;;
        bursts) bursts ;;
        *) echo "unknown section $section" >&2; exit 2 ;;
      esac
    done
    echo
    echo "run time: $((SECONDS - started)) s"
  } | tee "$results.tmp"
  mv "$results.tmp" "$results"
  cluster_stop "$name" "$version"
  name=''
  note "written to ${results#"$SNOWFLAKE_PG_ROOT"/}"
done
