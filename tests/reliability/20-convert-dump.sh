#!/usr/bin/env bash
# A database converted by snowflake_convert survives pg_dump and pg_restore: a shop whose
# serial, identity and bigserial keys (int4 widened with their foreign keys) were moved
# onto snowflake_next(), with rows from before and after, is dumped in the custom and the
# plain format and restored into fresh databases (pg_restore with 2 jobs, and psql). The
# restored schema and rows equal the original's, inserts there get snowflake ids above
# every old key, and the foreign keys hold. A dump of the tables alone restores once the
# extension is created first, and fails before, naming snowflake_next().
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=convert$version port=$((port_base + 37))
dir=$CLUSTERS_DIR/$name
tables=(customers orders order_items notes)

# client PROGRAM ARGS...: a PostgreSQL client program of this version, as postgres, on the
# scenario's server.
client() {
  local program=$1; shift
  "$(pg_bin_of "$version")/$program" -h "$dir" -p "$port" -U postgres "$@"
}

# rows_digest DB: each table's row count and the md5 of its rows in key order.
rows_digest() {
  local table
  for table in "${tables[@]}"; do
    sql "$name" "SELECT '$table', count(*), md5(coalesce(string_agg(t::text, ',' ORDER BY t.id), ''))
      FROM $table t" -d "$1"
  done
}

# schema DB: the schema as pg_dump prints it, without its comment lines and the random key
# of its \restrict lines.
schema() { client pg_dump --schema-only "$1" | grep -Ev '^(--|\\(un)?restrict )'; }

# works DB: a restored database takes new rows with snowflake ids above every old key,
# holds its foreign keys, and has a sequence only for the table left unconverted.
works() {
  local out
  out=$(sql "$name" "INSERT INTO customers (name) VALUES ('restored') RETURNING id" -d "$1")
  out=$(sql "$name" "SELECT $out > (SELECT max(id) FROM customers WHERE name <> 'restored')
      AND (snowflake_parse($out)).ts > now() - interval '1 minute'" -d "$1")
  [[ $out == t ]] || fail "$1: a new customer did not get a snowflake id of now above the old keys"
  out=$(sql "$name" "INSERT INTO order_items (order_id, item) VALUES (-1, 'x')" -d "$1" 2>&1) &&
    fail "$1: an item of a missing order was accepted"
  [[ $out == *order_items_order_id_fkey* ]] || fail "$1: unexpected error: $out"
  out=$(sql "$name" "SELECT string_agg(relname, ',') FROM pg_class WHERE relkind = 'S'" -d "$1")
  [[ $out == notes_id_seq ]] || fail "$1: sequences $out, not only notes_id_seq"
}

start "$name" "$port"
sql "$name" "CREATE DATABASE shop" >/dev/null
sql "$name" "CREATE EXTENSION snowflake_pg;
  CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL, referred_by integer REFERENCES customers);
  CREATE TABLE orders (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES customers, placed_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE order_items (id bigserial PRIMARY KEY, order_id integer NOT NULL REFERENCES orders, item text NOT NULL);
  CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL);
  INSERT INTO customers (name, referred_by) SELECT 'customer ' || n, nullif(n / 2, 0) FROM generate_series(1, 1000) n;
  INSERT INTO orders (customer_id) SELECT 1 + n % 1000 FROM generate_series(1, 5000) n;
  INSERT INTO order_items (order_id, item) SELECT 1 + n % 5000, 'item ' || n FROM generate_series(1, 20000) n;
  INSERT INTO notes (body) SELECT 'note ' || n FROM generate_series(1, 100) n" -d shop
converted=$(sql "$name" "SELECT count(*) FROM snowflake_convert('customers', 'id')" \
  -c "SELECT count(*) FROM snowflake_convert('orders', 'id')" \
  -c "SELECT count(*) FROM snowflake_convert('order_items', 'id')" -d shop | paste -sd+)
(( converted == 6 )) || fail "snowflake_convert changed $((converted)) columns, not the 3 keys and 3 foreign keys"
# Rows after the conversion, on new ids, referencing old and new keys.
sql "$name" "INSERT INTO customers (name, referred_by) SELECT 'new customer ' || n, n FROM generate_series(1, 100) n;
  INSERT INTO orders (customer_id) SELECT id FROM customers WHERE name LIKE 'new%';
  INSERT INTO order_items (order_id, item) SELECT id, 'new item' FROM orders WHERE id > 5000" -d shop
before=$(rows_digest shop)

# The custom format restored by pg_restore with 2 jobs, and the plain format by psql.
client pg_dump -Fc -f "$dir/shop.dump" shop
client pg_dump -Fp -f "$dir/shop.sql" shop
client createdb from_custom
client pg_restore --exit-on-error -j 2 -d from_custom "$dir/shop.dump" 2>"$dir/restore.err" ||
  fail "pg_restore failed: $(cat "$dir/restore.err")"
[[ ! -s $dir/restore.err ]] || fail "pg_restore said: $(cat "$dir/restore.err")"
client createdb from_plain
cluster_psql "$name" -q -d from_plain -f "$dir/shop.sql" >/dev/null 2>"$dir/psql.err" ||
  fail "restoring the plain dump failed: $(cat "$dir/psql.err")"
[[ ! -s $dir/psql.err ]] || fail "restoring the plain dump said: $(cat "$dir/psql.err")"
for db in from_custom from_plain; do
  diff <(schema shop) <(schema "$db") >"$dir/schema.diff" || fail "$db: the schema differs: $(head -20 "$dir/schema.diff")"
  [[ $(rows_digest "$db") == "$before" ]] || fail "$db: the rows differ"
  works "$db"
done

# The tables alone: their defaults call snowflake_next(), so the extension comes first.
client pg_dump -Fc -t customers -t orders -t order_items -f "$dir/tables.dump" shop
client createdb tables_first
out=$(client pg_restore --exit-on-error -d tables_first "$dir/tables.dump" 2>&1) &&
  fail "the tables restored into a database without the extension"
[[ $out == *"snowflake_next() does not exist"* ]] || fail "restoring the tables failed otherwise: $out"
client dropdb tables_first
client createdb tables_after
sql "$name" "CREATE EXTENSION snowflake_pg" -d tables_after
client pg_restore --exit-on-error -d tables_after "$dir/tables.dump" ||
  fail "the tables did not restore after CREATE EXTENSION"
tables=(customers orders order_items)
[[ $(rows_digest tables_after) == "$(rows_digest shop)" ]] || fail "tables_after: the rows differ"
check_log "$name"
rows=$(sql "$name" "SELECT (SELECT count(*) FROM customers) + (SELECT count(*) FROM orders)
  + (SELECT count(*) FROM order_items)" -d shop)
figure "6 columns converted (3 keys, 3 foreign keys); $rows rows from before and after the" \
  "conversion dumped and restored by pg_restore -j 2 and by psql: schema and rows equal, new ids" \
  "above the old keys, foreign keys enforced; the tables alone restore after CREATE EXTENSION" \
  "and fail before it, naming snowflake_next()"
