-- snowflake_convert: serial, identity and bigserial keys moved onto snowflake_next() with
-- the foreign key columns that hold them, its refusals, and the backfill of time-faithful
-- ids of docs/migrating.md, step by step.
SET timezone = 'UTC';
SET datestyle = 'ISO';
-- The PL/pgSQL line of each refusal is not what a user reads.
\set SHOW_CONTEXT never
CREATE SCHEMA convert;
SET search_path = convert, public;

-- A shop: an int4 serial parent with a self-reference, an int4 identity child, a bigserial
-- grandchild, and a one-to-one table whose key references orders and is referenced in turn.
CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL,
  referred_by integer REFERENCES customers);
CREATE TABLE orders (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  customer_id integer NOT NULL REFERENCES customers, placed_at timestamptz NOT NULL);
CREATE TABLE order_items (id bigserial PRIMARY KEY,
  order_id integer NOT NULL REFERENCES orders ON DELETE CASCADE, item text NOT NULL);
CREATE TABLE shipments (order_id integer PRIMARY KEY REFERENCES orders, carrier text NOT NULL);
CREATE TABLE parcels (id serial PRIMARY KEY, shipment_id integer NOT NULL REFERENCES shipments,
  weight_g integer NOT NULL);
-- A foreign key of two columns, each holding one of the keys.
ALTER TABLE orders ADD UNIQUE (customer_id, id);
CREATE TABLE returns (customer_id integer NOT NULL, order_id integer NOT NULL,
  FOREIGN KEY (customer_id, order_id) REFERENCES orders (customer_id, id));
INSERT INTO customers (name, referred_by) VALUES ('ada', NULL), ('bob', 1), ('cy', 2);
INSERT INTO orders (customer_id, placed_at)
SELECT 1 + n % 3, '2024-03-01 12:00:00+00'::timestamptz + n * interval '1 hour'
  FROM generate_series(1, 6) n;
INSERT INTO order_items (order_id, item) SELECT id, 'item ' || id || '.' || k
  FROM orders, generate_series(1, 2) k;
INSERT INTO shipments SELECT id, 'post' FROM orders WHERE id <= 4;
INSERT INTO parcels (shipment_id, weight_g) SELECT order_id, 100 * order_id FROM shipments;
INSERT INTO returns SELECT customer_id, id FROM orders WHERE id % 2 = 0;

-- The integer columns of the shop: their types, identities and defaults.
CREATE VIEW shop_columns AS
SELECT c.relname AS "table", a.attname AS "column", format_type(a.atttypid, a.atttypmod) AS type,
       a.attidentity AS identity, pg_get_expr(d.adbin, d.adrelid) AS "default"
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
 WHERE c.relnamespace = 'convert'::regnamespace AND c.relkind = 'r' AND a.attnum > 0
   AND a.atttypid IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype)
   AND c.relname IN ('customers', 'orders', 'order_items', 'shipments', 'parcels', 'returns')
 ORDER BY 1, 2;
SELECT * FROM shop_columns;
SELECT max(id) AS old_customer, (SELECT max(id) FROM orders) AS old_order,
       (SELECT max(id) FROM order_items) AS old_item FROM customers \gset

-- Refusals: nothing changes.
SELECT * FROM snowflake_convert(NULL, 'id');
SELECT * FROM snowflake_convert('shop_columns', 'type');
SELECT * FROM snowflake_convert('customers', 'nope');
SELECT * FROM snowflake_convert('customers', 'name');
SELECT * FROM snowflake_convert('orders', 'customer_id');
CREATE TABLE tickets (n serial, code text PRIMARY KEY);
SELECT * FROM snowflake_convert('tickets', 'n');
CREATE TABLE mirror (id integer PRIMARY KEY DEFAULT nextval('tickets_n_seq'));
SELECT * FROM snowflake_convert('tickets', 'n');
SELECT * FROM snowflake_convert('mirror', 'id');
CREATE TABLE readings (id bigserial PRIMARY KEY) PARTITION BY RANGE (id);
SELECT * FROM snowflake_convert('readings', 'id');
-- A key that already holds ids of the future would collide with new ids.
CREATE TABLE imported (id bigserial PRIMARY KEY);
INSERT INTO imported VALUES (9000000000000000000);
\set VERBOSITY terse
SELECT * FROM snowflake_convert('imported', 'id');
\set VERBOSITY default
DROP TABLE tickets, mirror, readings, imported;
SELECT * FROM shop_columns;

-- What a conversion of orders.id widens, looked at first.
SELECT * FROM snowflake_key_holders('orders', 'id') ORDER BY rel::text, attname;
-- The conversions: each key with every column that holds it, to any depth.
SELECT * FROM snowflake_convert('customers', 'id');
SELECT * FROM snowflake_convert('orders', 'id');
SELECT * FROM snowflake_convert('order_items', 'id');
SELECT * FROM shop_columns;
-- The sequences of the converted keys are gone; parcels, not converted, keeps its own.
SELECT relname FROM pg_class WHERE relkind = 'S' AND relnamespace = 'convert'::regnamespace;
SELECT * FROM snowflake_convert('orders', 'id');

-- Inserts get snowflake ids of now, above every old key, and the foreign keys hold.
INSERT INTO customers (name, referred_by) VALUES ('dee', 3);
WITH o AS (INSERT INTO orders (customer_id, placed_at)
           SELECT id, now() FROM customers WHERE name = 'dee' RETURNING id)
INSERT INTO order_items (order_id, item) SELECT id, 'new item' FROM o;
SELECT c.id > :old_customer AS customer_above, o.id > :old_order AS order_above,
       i.id > :old_item AS item_above,
       (snowflake_parse(o.id)).ts BETWEEN now() - interval '1 minute' AND now() + interval '1 minute' AS minted_now
  FROM customers c JOIN orders o ON o.customer_id = c.id JOIN order_items i ON i.order_id = o.id
 WHERE c.name = 'dee';
SELECT count(*) AS items, count(DISTINCT order_id) AS orders FROM order_items;
INSERT INTO order_items (order_id, item) VALUES (12345, 'orphan');
-- The identity was GENERATED ALWAYS; a plain default lets an insert give its own id.
INSERT INTO orders (id, customer_id, placed_at) VALUES (7, 1, '2024-03-02 00:00:00+00');
SELECT count(*) FROM orders;

-- docs/migrating.md: renumbering old rows with time-faithful ids from created_at, the
-- uid ranking rows within a millisecond, on a parent with a child. Three posts share
-- each millisecond.
CREATE TABLE posts (id serial PRIMARY KEY, created_at timestamptz NOT NULL, title text NOT NULL);
CREATE TABLE comments (id serial PRIMARY KEY, post_id integer NOT NULL REFERENCES posts,
  body text NOT NULL);
INSERT INTO posts (created_at, title)
SELECT '2024-03-01 12:00:00+00'::timestamptz + (n / 3) * interval '1 millisecond', 'post ' || n
  FROM generate_series(0, 8) n;
INSERT INTO comments (post_id, body) SELECT id, 'on ' || title FROM posts, generate_series(1, 2);
-- Step 1: every created_at can be an id that sorts below the ids of now.
SELECT count(*) FILTER (WHERE created_at IS NULL) AS no_time,
       count(*) FILTER (WHERE created_at < (snowflake_parse(0)).ts) AS before_epoch,
       count(*) FILTER (WHERE created_at >= now()) AS not_past
  FROM posts;
-- Step 2, in one transaction, so no row is added in between.
BEGIN;
SELECT * FROM snowflake_convert('posts', 'id');
ALTER TABLE comments ALTER CONSTRAINT comments_post_id_fkey DEFERRABLE INITIALLY DEFERRED;
CREATE TEMP TABLE renumbered ON COMMIT DROP AS
SELECT id AS old_id,
       snowflake_at(created_at,
         row_number() OVER (PARTITION BY snowflake_floor(created_at) ORDER BY id) - 1) AS new_id
  FROM posts;
UPDATE posts p SET id = r.new_id FROM renumbered r WHERE p.id = r.old_id;
UPDATE comments c SET post_id = r.new_id FROM renumbered r WHERE c.post_id = r.old_id;
SET CONSTRAINTS comments_post_id_fkey IMMEDIATE;
ALTER TABLE comments ALTER CONSTRAINT comments_post_id_fkey NOT DEFERRABLE;
COMMIT;
-- Each id holds its row's created_at, ranked within the millisecond in the old order.
SELECT p.id, p.created_at, s.ts, s.worker_id, s.sequence, p.title
  FROM posts p, snowflake_parse(p.id) s ORDER BY p.id;
SELECT bool_and(s.ts = p.created_at) AS time_faithful,
       array_agg(p.title ORDER BY p.id) = array_agg(p.title ORDER BY p.created_at, p.title) AS same_order
  FROM posts p, snowflake_parse(p.id) s;
SELECT count(*) AS comments, count(p.id) AS on_a_post FROM comments c LEFT JOIN posts p ON p.id = c.post_id;
SELECT condeferrable FROM pg_constraint WHERE conname = 'comments_post_id_fkey';
INSERT INTO posts (created_at, title) VALUES (now(), 'new') RETURNING id > (SELECT max(id) FROM posts WHERE title <> 'new') AS above;
-- A missed child is caught before anything is kept.
BEGIN;
ALTER TABLE comments ALTER CONSTRAINT comments_post_id_fkey DEFERRABLE INITIALLY DEFERRED;
UPDATE posts SET id = snowflake_at(created_at, 100) WHERE title = 'post 0';
SET CONSTRAINTS comments_post_id_fkey IMMEDIATE;
ROLLBACK;

RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA convert CASCADE;
