#!/usr/bin/env bash
# Bad input at volume: extreme and random values into every function (bigint limits,
# infinities, the ends of PostgreSQL's timestamps, times around the epoch and the end of
# the time bits, uids around the range of snowflake_at, NULLs). Each call either answers
# correctly or fails with a clean out-of-range error; the server stays up. The layout's
# numbers come from the extension: the epoch is the time of id 0, the last time that of
# the largest bigint, and the uids of one ms are as many as the ids between two floors.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=badinput$version port=$((port_base + 15)) random=${BAD_INPUT_RANDOM:-20000}

start "$name" "$port"
started=$(sql "$name" "CREATE EXTENSION snowflake_pg; SELECT pg_postmaster_start_time()")
sql "$name" "
CREATE TABLE layout AS SELECT (snowflake_parse(0)).ts AS epoch,
  (snowflake_parse(9223372036854775807)).ts AS last,
  snowflake_floor('2021-01-01 00:00:00.001+00') - snowflake_floor('2021-01-01 00:00:00+00') AS uids;
CREATE TABLE times AS SELECT t FROM layout, unnest(ARRAY['-infinity', 'infinity',
    '4713-01-01 00:00:00+00 BC', '294276-12-31 23:59:59.999999+00', '1970-01-01 00:00:00+00',
    epoch - interval '1 microsecond', epoch, epoch + interval '1 millisecond',
    last, last + interval '999 microseconds', last + interval '1 millisecond',
    NULL]::timestamptz[]) t
  UNION ALL SELECT timestamptz '1900-01-01' + random() * interval '300 years'
    FROM generate_series(1, $random);
CREATE TABLE numbers AS SELECT n FROM layout, unnest(ARRAY[-9223372036854775808, -uids, -1, 0, 1,
    uids - 1, uids, 9223372036854775807, NULL]::bigint[]) n
  UNION ALL SELECT ((random() * 2 - 1) * 9.2e18)::bigint FROM generate_series(1, $random)
  UNION ALL SELECT (random() * 2 * uids)::bigint - uids / 2 FROM layout, generate_series(1, $random);
CREATE TABLE outcomes (fn text, input text, result text, sqlstate text, message text);
-- attempt FN INPUT CALL: runs the SQL expression CALL in a subtransaction of its own and
-- keeps its result, or its error.
CREATE FUNCTION attempt(fn text, input text, call text) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
  result text;
BEGIN
  EXECUTE 'SELECT (' || call || ')::text' INTO result;
  INSERT INTO outcomes (fn, input, result) VALUES (fn, input, result);
EXCEPTION WHEN OTHERS THEN
  INSERT INTO outcomes VALUES (fn, input, NULL, SQLSTATE, SQLERRM);
END \$\$;
SELECT count(attempt('floor', t::text, format('snowflake_floor(%L::timestamptz)', t))) FROM times;
-- Each time with a uid drawn at random (OFFSET 0 keeps one draw per row).
SELECT count(attempt('at', t || ', ' || u, format('snowflake_at(%L::timestamptz, %L::bigint)', t, u)))
  FROM (SELECT t, uids[1 + floor(random() * cardinality(uids))::int] AS u
    FROM times, (SELECT ARRAY(SELECT n FROM numbers) AS uids) a OFFSET 0) s;
SELECT count(attempt('parse', n::text, format('snowflake_parse(%L::bigint)', n))) FROM numbers" >/dev/null

# Every error is an out-of-range error with a message of ours, never an internal one.
unclean=$(sql "$name" "SELECT fn || '(' || input || '): ' || sqlstate || ' ' || message
  FROM outcomes WHERE sqlstate IS NOT NULL AND (sqlstate NOT IN ('22003', '22008')
  OR message !~ '^(timestamp .* is (before snowflake.epoch|past the last time snowflake ids can hold)|snowflake ids cannot hold an infinite timestamp|snowflake id -[0-9]+ is negative|uid -?[0-9]+ is out of range)')
  LIMIT 5")
[[ -z $unclean ]] || fail "unclean errors: $unclean"
# Every answer is right, NULL gives NULL, and:
# - the floor is the first id of the time's millisecond: its ts is the time truncated to
#   the ms, and the id before it (if any) has an earlier ts;
# - at() puts the uid in the low bits, above the floor of the time;
# - parse() agrees with the other functions: the id lies in its ts's millisecond, from
#   its floor on (at(ts, id - floor(ts)) = id, an error if it lay past the millisecond),
#   and minus its sequence (above the 10 worker bits, in the default layout) it is the
#   first id of its worker in that millisecond.
wrong=$(sql "$name" "SELECT count(*) FROM outcomes o WHERE sqlstate IS NULL AND NOT CASE fn
  WHEN 'floor' THEN (input IS NULL AND result IS NULL) OR (SELECT
      p.ts = date_trunc('milliseconds', input::timestamptz)
      AND (result::bigint = 0 OR (snowflake_parse(result::bigint - 1)).ts < p.ts)
    FROM snowflake_parse(result::bigint) p)
  WHEN 'at' THEN (result IS NULL AND (input IS NULL OR split_part(input, ', ', 2) = ''))
    OR result::bigint = snowflake_floor(split_part(input, ', ', 1)::timestamptz)
      | split_part(input, ', ', 2)::bigint
  WHEN 'parse' THEN (input IS NULL AND result IS NULL) OR (SELECT snowflake_floor(p.ts) <= input::bigint
      AND snowflake_at(p.ts, input::bigint - snowflake_floor(p.ts)) = input::bigint
      AND (q.ts, q.worker_id, q.sequence) = (p.ts, p.worker_id, 0)
    FROM (SELECT (result::snowflake_parts).*) p, snowflake_parse(input::bigint - (p.sequence::bigint << 10)) q)
  END")
[[ $wrong == 0 ]] || fail "$wrong answers are wrong"
[[ $(sql "$name" "SELECT pg_postmaster_start_time()") == "$started" ]] || fail "the server restarted"
check_log "$name"
IFS='|' read -r calls errors <<<"$(sql "$name" "SELECT count(*), count(sqlstate) FROM outcomes")"
figure "$calls calls of floor, at and parse with extreme, random and NULL input: $errors clean" \
  "out-of-range errors, every other answer checked right; the server stayed up"
