-- The order applications rely on (README, "Order"): the ids one statement mints rise in
-- the order of its rows, whatever kind of statement, and the ids of one session rise
-- across statements and transactions. A bigserial beside the id numbers the rows in the
-- order they were inserted: every id must exceed the one of the row before.
CREATE TABLE ordered (id bigint PRIMARY KEY DEFAULT snowflake_next(), n bigserial, via text);
CREATE FUNCTION ids_rise() RETURNS TABLE (rows bigint, out_of_order bigint)
LANGUAGE sql AS $$
  SELECT count(*), count(*) FILTER (WHERE id <= previous)
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS previous FROM ordered) o
$$;
-- A multi-row VALUES.
INSERT INTO ordered (via) VALUES ('values'), ('values'), ('values'), ('values'), ('values');
-- INSERT ... SELECT, many ids in each millisecond.
INSERT INTO ordered (via) SELECT 'select ' || g FROM generate_series(1, 20000) g ORDER BY g;
-- COPY.
COPY ordered (via) FROM STDIN;
copy 1
copy 2
copy 3
copy 4
\.
-- RETURNING gives the rows in the order they were inserted: their ids rise in it too.
WITH returned AS (
  INSERT INTO ordered (via) SELECT 'returning' FROM generate_series(1, 5000) RETURNING id
)
SELECT count(*) AS returned, count(*) FILTER (WHERE id <= previous) AS out_of_order
FROM (SELECT id, lag(id) OVER () AS previous FROM returned) r;
-- Across statements and transactions of the session, committed or not.
BEGIN;
INSERT INTO ordered (via) VALUES ('transaction');
COMMIT;
BEGIN;
INSERT INTO ordered (via) VALUES ('rolled back');
ROLLBACK;
INSERT INTO ordered (via) SELECT 'after' FROM generate_series(1, 1000);
SELECT * FROM ids_rise();
DROP TABLE ordered;
DROP FUNCTION ids_rise();
