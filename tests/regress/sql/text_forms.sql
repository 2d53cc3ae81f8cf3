-- Ids as fixed-width text: Crockford base32 (13 characters, the default) and base62 (11).
\set VERBOSITY default

SELECT p.proname, pg_get_function_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result,
       p.provolatile AS volatility, p.proparallel AS parallel, p.proisstrict AS strict
  FROM pg_proc p
 WHERE p.proname IN ('snowflake_encode', 'snowflake_decode')
 ORDER BY p.proname;

-- Round trips at the extremes and at the digit boundaries, in both forms.
SELECT id, snowflake_encode(id) AS base32, snowflake_encode(id, 'base62') AS base62,
       snowflake_decode(snowflake_encode(id)) = id AS base32_back,
       snowflake_decode(snowflake_encode(id, 'base62'), 'base62') = id AS base62_back
  FROM (VALUES (0::bigint), (1), (31), (32), (61), (62), (912414338541690884),
               (9223372036854775806), (9223372036854775807)) AS ids (id);

-- Crockford base32 reads either case, I and L as 1, O as 0; base62 is case sensitive.
SELECT snowflake_decode('7zzzzzzzzzzzz') AS lower_max,
       snowflake_decode('0sacc06wc0804') AS lower,
       snowflake_decode('OSACCO6WCO8O4') AS o_for_0,
       snowflake_decode('00000000000iL') AS i_and_l_for_1,
       snowflake_decode('0000000000a', 'base62') AS base62_a,
       snowflake_decode('0000000000A', 'base62') AS base62_upper_a;

-- Form names in any case; NULL in gives NULL out.
SELECT snowflake_encode(62, 'BASE62') AS upper_name,
       snowflake_encode(NULL) IS NULL AS null_id,
       snowflake_encode(1, NULL) IS NULL AS null_form,
       snowflake_decode(NULL) IS NULL AS null_text;

-- Text order is id order: minted ids, ids of every magnitude, and the extremes, sorted
-- by their text under COLLATE "C" come out as sorted by id.
CREATE TEMP TABLE ids AS
  SELECT snowflake_next() AS id FROM generate_series(1, 10000)
  UNION ALL
  SELECT (hashtextextended(g::text, 0) & 9223372036854775807) >> (g % 63)
    FROM generate_series(1, 20000) AS g
  UNION ALL
  VALUES (0), (1), (9223372036854775806), (9223372036854775807);
SELECT count(*) AS ids,
       (SELECT array_agg(id ORDER BY snowflake_encode(id) COLLATE "C") FROM ids)
         = (SELECT array_agg(id ORDER BY id) FROM ids) AS base32_sorts_as_ids,
       (SELECT array_agg(id ORDER BY snowflake_encode(id, 'base62') COLLATE "C") FROM ids)
         = (SELECT array_agg(id ORDER BY id) FROM ids) AS base62_sorts_as_ids,
       bool_and(snowflake_decode(snowflake_encode(id)) = id) AS base32_round_trips,
       bool_and(snowflake_decode(snowflake_encode(id, 'base62'), 'base62') = id) AS base62_round_trips,
       bool_and(length(snowflake_encode(id)) = 13 AND length(snowflake_encode(id, 'base62')) = 11)
         AS fixed_width
  FROM ids;

-- Immutable: usable in an index, so a table keyed by id can be looked up by its text.
CREATE TEMP TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text);
CREATE UNIQUE INDEX orders_code ON orders (snowflake_encode(id));
INSERT INTO orders (id, item) VALUES (912414338541690884, 'tea');
SELECT id, item FROM orders WHERE snowflake_encode(id) = '0SACC06WC0804';

-- Every bad input is an error that says what is wrong and what is allowed.
SELECT snowflake_encode(-1);
SELECT snowflake_encode(-9223372036854775808, 'base62');
SELECT snowflake_encode(1, 'base64');
SELECT snowflake_decode('');
SELECT snowflake_decode('000000000000');
SELECT snowflake_decode('01ARZ3NDEKTSV4RRFFQ69G5FAV');
SELECT snowflake_decode('0SACC06WC0804', 'base62');
SELECT snowflake_decode('000000000000U');
SELECT snowflake_decode('0000-00000000');
SELECT snowflake_decode(E'000000\t000000');
SELECT snowflake_decode('0000000000_', 'base62');
SELECT snowflake_decode('8000000000000');
SELECT snowflake_decode('zzzzzzzzzzzzz');
SELECT snowflake_decode('AzL8n0Y58m8', 'base62');
SELECT snowflake_decode('0000000000000', 'hex');

-- Their SQLSTATEs: 22003 out of range, 22P02 bad text, 22023 unknown form.
CREATE FUNCTION pg_temp.sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
SELECT query, pg_temp.sqlstate_of(query) AS sqlstate
  FROM (VALUES ('SELECT snowflake_encode(-1)'),
               ('SELECT snowflake_encode(1, ''base64'')'),
               ('SELECT snowflake_decode(''000000000000'')'),
               ('SELECT snowflake_decode(''000000000000U'')'),
               ('SELECT snowflake_decode(''8000000000000'')'),
               ('SELECT snowflake_decode(''AzL8n0Y58m8'', ''base62'')'),
               ('SELECT snowflake_decode(''AzL8n0Y58m7'', ''base62'')')) AS queries (query);
