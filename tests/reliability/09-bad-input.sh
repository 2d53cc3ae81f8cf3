#!/usr/bin/env bash
# Bad input at volume: extreme and random values into every function (bigint limits,
# infinities, the ends of PostgreSQL's timestamps, times around the epoch and the end of
# the 41-bit range, NULLs). Each call either answers correctly or fails with a clean
# out-of-range error; the server stays up.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=badinput$version port=$((port_base + 15)) random=${BAD_INPUT_RANDOM:-20000}

start "$name" "$port"
started=$(sql "$name" "$port" "CREATE EXTENSION snowflake_pg; SELECT pg_postmaster_start_time()")
sql "$name" "$port" "
CREATE TABLE times AS SELECT t FROM unnest(ARRAY['-infinity', 'infinity',
    '4713-01-01 00:00:00+00 BC', '294276-12-31 23:59:59.999999+00', '1970-01-01 00:00:00+00',
    '2019-12-31 23:59:59.999999+00', '2020-01-01 00:00:00+00', '2020-01-01 00:00:00.001+00',
    '2089-09-06 15:47:35.551+00', '2089-09-06 15:47:35.551999+00', '2089-09-06 15:47:35.552+00',
    NULL]::timestamptz[]) t
  UNION ALL SELECT timestamptz '1900-01-01' + random() * interval '300 years'
    FROM generate_series(1, $random);
CREATE TABLE numbers AS SELECT n FROM unnest(ARRAY[-9223372036854775808, -4194304, -1, 0, 1,
    4194303, 4194304, 9223372036854775807, NULL]::bigint[]) n
  UNION ALL SELECT ((random() * 2 - 1) * 9.2e18)::bigint FROM generate_series(1, $random)
  UNION ALL SELECT (random() * 8388608)::bigint - 2097152 FROM generate_series(1, $random);
CREATE TABLE outcomes (fn text, input text, result text, sqlstate text, message text);
DO \$\$
DECLARE
  t timestamptz; n bigint; u bigint;
  uids bigint[] := ARRAY(SELECT numbers.n FROM numbers);
BEGIN
  FOR t IN SELECT times.t FROM times LOOP
    BEGIN
      INSERT INTO outcomes (fn, input, result) VALUES ('floor', t::text, snowflake_floor(t)::text);
    EXCEPTION WHEN OTHERS THEN
      INSERT INTO outcomes VALUES ('floor', t::text, NULL, SQLSTATE, SQLERRM);
    END;
    u := uids[1 + floor(random() * cardinality(uids))];
    BEGIN
      INSERT INTO outcomes (fn, input, result) VALUES ('at', t || ', ' || u, snowflake_at(t, u)::text);
    EXCEPTION WHEN OTHERS THEN
      INSERT INTO outcomes VALUES ('at', t || ', ' || u, NULL, SQLSTATE, SQLERRM);
    END;
  END LOOP;
  FOR n IN SELECT numbers.n FROM numbers LOOP
    BEGIN
      INSERT INTO outcomes (fn, input, result) VALUES ('parse', n::text, snowflake_parse(n)::text);
    EXCEPTION WHEN OTHERS THEN
      INSERT INTO outcomes VALUES ('parse', n::text, NULL, SQLSTATE, SQLERRM);
    END;
  END LOOP;
END
\$\$"

# Every error is an out-of-range error with a message of ours, never an internal one.
unclean=$(sql "$name" "$port" "SELECT fn || '(' || input || '): ' || sqlstate || ' ' || message
  FROM outcomes WHERE sqlstate IS NOT NULL AND (sqlstate NOT IN ('22003', '22008')
  OR message !~ '^(timestamp .* is (before snowflake.epoch|past the last time snowflake ids can hold)|snowflake ids cannot hold an infinite timestamp|snowflake id -[0-9]+ is negative|uid -?[0-9]+ is out of range)')
  LIMIT 5")
[[ -z $unclean ]] || fail "unclean errors: $unclean"
# Every answer is right: the floor is the first id of the time's millisecond, at() puts
# the uid in the low bits, parse() undoes the layout, NULL gives NULL.
wrong=$(sql "$name" "$port" "SELECT count(*) FROM outcomes o WHERE sqlstate IS NULL AND NOT CASE fn
  WHEN 'floor' THEN (input IS NULL AND result IS NULL) OR (result::bigint & 4194303 = 0
    AND (snowflake_parse(result::bigint)).ts = date_trunc('milliseconds', input::timestamptz))
  WHEN 'at' THEN (result IS NULL AND (input IS NULL OR split_part(input, ', ', 2) = ''))
    OR result::bigint = snowflake_floor(split_part(input, ', ', 1)::timestamptz)
      | split_part(input, ', ', 2)::bigint
  WHEN 'parse' THEN (input IS NULL AND result IS NULL) OR (SELECT snowflake_floor(p.ts)
      + (p.worker_id << 12) + p.sequence = input::bigint
    FROM (SELECT (result::snowflake_parts).*) p)
  END")
[[ $wrong == 0 ]] || fail "$wrong answers are wrong"
[[ $(sql "$name" "$port" "SELECT pg_postmaster_start_time()") == "$started" ]] || fail "the server restarted"
check_log "$name"
IFS='|' read -r calls errors <<<"$(sql "$name" "$port" "SELECT count(*), count(sqlstate) FROM outcomes")"
figure "$calls calls of floor, at and parse with extreme, random and NULL input: $errors clean" \
  "out-of-range errors, every other answer checked right; the server stayed up"
