#!/usr/bin/env bash
# pg_partman (Debian's 4.7 for PostgreSQL 15): the recipe of docs/partitioning.md for daily
# partitions of a snowflake id column, run as written on a stock server (ms ticks, 22 bits
# below the time) and on one with the js53 layout (10 ms ticks, 16 bits). Every partition
# pg_partman makes (at the start, by maintenance once ids of later days arrive, and ahead
# of the clock) runs from snowflake_floor of a UTC midnight to snowflake_floor of the next
# one, the partitions follow each other with no gap, each id lands in the partition of its
# UTC day and none in the default, and retention drops whole days. With an epoch that is
# not at a UTC midnight, pg_partman's days cannot line up and the recipe refuses.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
partman_control=$("$(pg_config_of "$version")" --sharedir)/extension/pg_partman.control
if [[ ! -f $partman_control ]]; then
  echo "SKIP: pg_partman is not installed in PostgreSQL $version ($partman_control); scripts/setup.sh" \
    "installs Debian's postgresql-15-partman, which is for PostgreSQL 15 only"
  exit 0
fi
port=$((port_base + 36))

# The recipe, as docs/partitioning.md gives it.
recipe="
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
CREATE TABLE public.events (id bigint PRIMARY KEY DEFAULT snowflake_next(), body text)
  PARTITION BY RANGE (id);
DO \$\$
DECLARE
  today timestamptz := date_trunc('day', now(), 'UTC');
  -- The ids of one UTC day: the same number every day, whatever the layout.
  per_day bigint := snowflake_floor(today + interval '1 day') - snowflake_floor(today);
BEGIN
  -- pg_partman starts id partitions at multiples of the interval, counted from id 0, the
  -- epoch: they begin at UTC midnights only if the epoch is at one.
  IF snowflake_floor(today) % per_day <> 0 THEN
    RAISE EXCEPTION 'snowflake.epoch (%) is not at a UTC midnight: pg_partman''s partitions of a day of ids would not begin at midnight',
      (snowflake_parse(0)).ts;
  END IF;
  PERFORM partman.create_parent(p_parent_table := 'public.events', p_control := 'id',
    p_type := 'native', p_interval := per_day::text, p_premake := 4,
    p_start_partition := snowflake_floor(today - interval '1 day')::text);
END \$\$;"
# Maintenance ahead of the clock, for days on which nothing may be inserted.
ahead="SELECT partman.create_partition_id('public.events', ARRAY(
  SELECT snowflake_floor(d) FROM generate_series(date_trunc('day', now(), 'UTC'),
    date_trunc('day', now(), 'UTC') + interval '10 days', interval '1 day') d))"

# days NAME: the partitions of public.events as "PARTITIONS|ALIGNED|CONTIGUOUS|FIRST|LAST":
# how many (the default left out), how many run from snowflake_floor of a UTC midnight to
# snowflake_floor of the next, whether each begins where the one before ends, and the
# first and last day.
days() {
  sql "$1" "WITH parts AS (
      SELECT m[1]::bigint AS lower, m[2]::bigint AS upper
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid,
             regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''(\d+)''\) TO \(''(\d+)''\)') m
       WHERE i.inhparent = 'public.events'::regclass AND m IS NOT NULL),
    dated AS (SELECT *, (snowflake_parse(lower)).ts AS day, lag(upper) OVER (ORDER BY lower) AS before
      FROM parts)
    SELECT count(*), count(*) FILTER (WHERE day = date_trunc('day', day, 'UTC')
        AND lower = snowflake_floor(day) AND upper = snowflake_floor(day + interval '1 day')),
      coalesce(bool_and(before IS NULL OR before = lower), true),
      to_char(min(day) AT TIME ZONE 'UTC', 'YYYY-MM-DD'), to_char(max(day) AT TIME ZONE 'UTC', 'YYYY-MM-DD')
    FROM dated"
}

# aligned NAME WHEN: every partition of public.events is a UTC day, with no gap; prints them.
aligned() {
  local partitions good contiguous first last
  IFS='|' read -r partitions good contiguous first last <<<"$(days "$1")"
  ((partitions > 0 && good == partitions)) ||
    fail "$1, $2: $((partitions - good)) of $partitions partitions are not a UTC day of ids"
  [[ $contiguous == t ]] || fail "$1, $2: the partitions leave gaps"
  echo "$partitions days, $first to $last"
}

# placed NAME: every row of public.events is in the partition of its UTC day, none in the
# default partition; prints the row count.
placed() {
  local counts rows wrong
  counts=$(sql "$1" "SELECT count(*), count(*) FILTER (WHERE p.lower IS NULL
      OR date_trunc('day', (snowflake_parse(e.id)).ts, 'UTC') <> (snowflake_parse(p.lower)).ts)
    FROM public.events e LEFT JOIN (SELECT c.oid, (regexp_match(pg_get_expr(c.relpartbound, c.oid),
        'FROM \(''(\d+)''\)'))[1]::bigint AS lower FROM pg_class c) p ON p.oid = e.tableoid")
  IFS='|' read -r rows wrong <<<"$counts"
  [[ $wrong == 0 ]] || fail "$1: $wrong of $rows ids are not in the partition of their UTC day"
  echo "$rows"
}

# recipe_on NAME LABEL [setting=value ...]: the recipe and its maintenance on a fresh server.
recipe_on() {
  local name=$1 label=$2 per_day at_start rows after_data ahead_days kept max_day oldest; shift 2
  start "$name" "$port" "$@"
  sql "$name" "CREATE EXTENSION snowflake_pg" -c "SET client_min_messages = warning" -c "$recipe" >/dev/null
  per_day=$(sql "$name" "SELECT partition_interval FROM partman.part_config")
  at_start=$(aligned "$name" "at the start")
  # Ids of now, and the first and the last id of each day (the floor of its midnight, and
  # the id just below the next midnight's floor).
  sql "$name" "INSERT INTO public.events (body) SELECT 'now' FROM generate_series(1, 10000);
    INSERT INTO public.events (id, body)
    SELECT snowflake_floor(d) + edge * (snowflake_floor(d + interval '1 day') - snowflake_floor(d) - 1), 'edge'
      FROM generate_series(date_trunc('day', now(), 'UTC') - interval '1 day',
        date_trunc('day', now(), 'UTC') + interval '3 days', interval '1 day') d, (VALUES (0), (1)) e(edge)"
  placed "$name" >/dev/null
  # Ids of the last day made so far: maintenance makes 4 days past it.
  sql "$name" "INSERT INTO public.events (id, body)
    SELECT snowflake_at(date_trunc('day', now(), 'UTC') + interval '3 days 12 hours', n), 'later'
      FROM generate_series(0, 999) n" -c "SELECT partman.run_maintenance('public.events')" >/dev/null
  after_data=$(aligned "$name" "after maintenance")
  sql "$name" "$ahead" >/dev/null
  ahead_days=$(aligned "$name" "ahead of the clock")
  rows=$(placed "$name")
  # Retention of two days of ids before the last id: the days that end before it go.
  sql "$name" "UPDATE partman.part_config SET retention = (2 * partition_interval::bigint)::text,
    retention_keep_table = false" -c "SELECT partman.run_maintenance('public.events')" >/dev/null
  kept=$(aligned "$name" "after retention")
  IFS='|' read -r max_day oldest <<<"$(sql "$name" "SELECT
    to_char(date_trunc('day', (snowflake_parse(max(id) - 2 * $per_day)).ts, 'UTC') AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
    to_char(min((snowflake_parse(id)).ts) AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM public.events")"
  [[ $kept == *", $max_day to "* ]] ||
    fail "$name: retention of 2 days before the last id should keep $max_day on, kept $kept"
  [[ $oldest == "$max_day" ]] || fail "$name: after retention the oldest id is of $oldest, not $max_day"
  placed "$name" >/dev/null
  check_log "$name"
  cluster_stop "$name"
  figure "$label: $per_day ids a day; at the start $at_start; $rows ids each in its UTC day, none" \
    "in the default; after maintenance $after_data; ahead of the clock $ahead_days; after" \
    "a retention of 2 days $kept; every partition from the floor of a UTC midnight to the next"
}

recipe_on "partman$version" "stock layout"
recipe_on "partman$version-js53" "js53 layout" shared_preload_libraries=snowflake_pg snowflake.layout=js53

# An epoch at 06:00 UTC: partitions of a day of ids would run from 06:00 to 06:00.
name=partman$version-epoch
start "$name" "$port" shared_preload_libraries=snowflake_pg "snowflake.epoch='2020-01-01T06:00:00Z'"
out=$(sql "$name" "CREATE EXTENSION snowflake_pg" -c "SET client_min_messages = warning" -c "$recipe" 2>&1) &&
  fail "the recipe ran with an epoch at 06:00 UTC: $out"
[[ $out == *"is not at a UTC midnight"* ]] || fail "the recipe failed otherwise than expected: $out"
[[ $(sql "$name" "SELECT count(*) FROM pg_inherits") == 0 ]] || fail "the refused recipe left partitions"
check_log "$name"
refusal=${out#*ERROR:  }
figure "epoch at 06:00 UTC: the recipe refuses (\"${refusal%%$'\n'*}\") and leaves no partition"
