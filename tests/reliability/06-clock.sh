#!/usr/bin/env bash
# Clock steps, with libfaketime under the postmaster: every backend's clock moves at once
# when the offset in a file changes. Small steps back under live backends are absorbed
# (ids keep increasing); a step back beyond snowflake.max_lead_ms is a clean error; a
# step forward is followed. Then the documented limit of the default mode: a step back
# between two holders of one backend slot, which only the slot marks of preload catch.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
live_backends() { # NAME: small steps back and forth under 4 busy backends
  local name=$1
  sql "$name" "CREATE TABLE live (LIKE minted INCLUDING ALL)"
  local script=$CLUSTERS_DIR/$name/live.sql
  echo "INSERT INTO live (id, pid) SELECT snowflake_next(), pg_backend_pid() FROM generate_series(1, 200);" >"$script"
  pgbench_run "$name" -c 4 -j 2 -T 8 -f "$script" >/dev/null &
  local offset
  # Steps of -0.4, +0.4, -0.9, +0.6, +0.8, -0.5 s: every step back within the 1 s bound.
  for offset in -0.4 +0 -0.9 -0.3 +0.5 +0; do sleep 1; step "$name" "$offset"; done
  wait $! || fail "ids failed under small clock steps"
  local rows
  rows=$(check_distinct "$name" live)
  check_increasing "$name" live
  figure "4 live backends under steps of -0.4, +0.4, -0.9, +0.6, +0.8, -0.5 s:" \
    "$rows ids, 0 duplicates, increasing within every backend"
}

large_steps() { # NAME: one live backend: a step back past the bound, a step forward and back
  local name=$1 offsets=$CLUSTERS_DIR/$1.offset out
  out=$(cluster_psql "$name" -qAt -v ON_ERROR_STOP=0 -v VERBOSITY=verbose 2>&1 <<SQL
\! echo real \$(date +%s%3N)
INSERT INTO minted DEFAULT VALUES;
\! echo -3 >$offsets.new && mv -f $offsets.new $offsets
INSERT INTO minted DEFAULT VALUES;
\! bash -c "source $SNOWFLAKE_PG_ROOT/scripts/lib.sh && sql $name 'INSERT INTO minted DEFAULT VALUES RETURNING 1'"
\! echo +5 >$offsets.new && mv -f $offsets.new $offsets
INSERT INTO minted DEFAULT VALUES RETURNING 'forward ' || (extract(epoch FROM
  (snowflake_parse(id)).ts - (SELECT (snowflake_parse(max(id))).ts FROM minted)) * 1000)::bigint;
\! echo real \$(date +%s%3N)
\! echo +0 >$offsets.new && mv -f $offsets.new $offsets
INSERT INTO minted DEFAULT VALUES;
SQL
  )
  local errors
  errors=$(grep -c '^ERROR:  55000: the system clock is [0-9]* ms behind the last snowflake id of this backend slot' <<<"$out") || true
  [[ $errors == 2 ]] || { echo "$out"; fail "expected 2 clean errors for 2 steps back past the bound"; }
  grep -qx 1 <<<"$out" || { echo "$out"; fail "a new backend could not mint while the clock was 3 s back"; }
  # The id after the 5 s step forward is 5 s past the last one before, and at most the real
  # time between them more (some hundred ms, a second or two on an emulated server).
  local real forward
  mapfile -t real < <(sed -n 's/^real //p' <<<"$out")
  forward=$(sed -n 's/^forward //p' <<<"$out")
  ((${#real[@]} == 2 && forward >= 5000 && forward <= 5000 + real[1] - real[0])) ||
    { echo "$out"; fail "ids did not follow a 5 s step forward: the next id $forward ms after the last"; }
  local behind
  behind=$(grep -o '[0-9]* ms behind' <<<"$out" | grep -o '^[0-9]*' | paste -sd /)
  check_distinct "$name" minted >/dev/null
  figure "one live backend: a 3 s step back and, after a 5 s step forward, a step back to" \
    "real time: clean errors (55000, clock $behind ms behind); a new backend minted during the step back;" \
    "ids followed the step forward ($forward ms past the last, $((real[1] - real[0])) ms later)"
}

handover() { # MODE NAME: a step back between two holders of one slot
  local mode=$1 name=$2 a_first_unix_ms slot_a
  sql "$name" "CREATE TABLE handover (id bigint PRIMARY KEY)"
  quiesce "$name"
  # A: mints for a fraction of a second, then disconnects (with no lead to wait out).
  IFS='|' read -r a_first_unix_ms slot_a <<<"$(sql "$name" "WITH a AS (INSERT INTO handover
    SELECT snowflake_next() FROM generate_series(1, 50000) RETURNING id)
    SELECT (extract(epoch FROM (snowflake_parse(min(id))).ts) * 1000)::bigint,
      min((snowflake_parse(id)).backend_slot) FROM a")"
  # B: once it holds A's slot, and before its first id, the clock steps back to 0.3 s
  # before A's first id; then B mints over more than A's span. Its repeats of A's ids
  # are caught by the primary key.
  local offsets=$CLUSTERS_DIR/$name.offset out
  out=$(in_slot "$name" "$slot_a" "
\\! d=\$((\$(date +%s%3N) - $a_first_unix_ms + 300)); echo step \$d; echo -\$((d / 1000)).\$(printf %03d \$((d % 1000)))>$offsets.new; mv -f $offsets.new $offsets
WITH b AS (INSERT INTO handover SELECT snowflake_next() FROM generate_series(1, 100000)
  ON CONFLICT DO NOTHING RETURNING id)
SELECT count(*), 100000 - count(*), min((snowflake_parse(id)).backend_slot) FROM b;")
  step "$name" +0
  local step_ms minted repeated slot_b
  step_ms=$(sed -n 's/^step //p' <<<"$out")
  [[ -n $step_ms ]] || fail "the clock was not stepped: $out"
  local what="$mode server, clock stepped back $step_ms ms between two holders of slot $slot_a"
  if [[ $out == *"ERROR:  55000: the system clock is "*" ms behind the last snowflake id of this backend slot"* ]]; then
    [[ $mode == preload ]] || fail "stock server: unexpected error: $out"
    figure "$what: the new holder gets a clean error (55000, past the bound), 0 duplicates"
    return
  fi
  IFS='|' read -r minted repeated slot_b <<<"$(tail -n 1 <<<"$out")"
  [[ $slot_b == "$slot_a" ]] || fail "B got slot $slot_b, not A's slot $slot_a: $out"
  if [[ $mode == preload ]]; then
    ((repeated == 0)) || fail "preload: $repeated ids of B repeated A's"
    figure "$what: the new holder starts after the slot mark, $minted ids, 0 repeats"
  else
    figure "$what (documented limit of the default mode): $repeated of $((minted + repeated))" \
      "ids repeated the old holder's and were caught by the primary key"
  fi
}

name=clock$version-stock port=$((port_base + 10))
start_faked "$name" "$port"
sql "$name" "CREATE EXTENSION snowflake_pg; $minted_table"
live_backends "$name"
large_steps "$name"
handover stock "$name"
check_log "$name"

name=clock$version-preload port=$((port_base + 11))
start_faked "$name" "$port" shared_preload_libraries=snowflake_pg
sql "$name" "CREATE EXTENSION snowflake_pg"
handover preload "$name"
check_log "$name"
