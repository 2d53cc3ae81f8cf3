#!/usr/bin/env bash
# Upgrade from 0.1.0: a database created with VERSION '0.1.0', with a table minting by
# default and rows in it, keeps working on the new library (installed over the old one,
# as a package upgrade does); ALTER EXTENSION snowflake_pg UPDATE then gives it every
# object of the current version (through each release's upgrade script in turn), exactly
# as a fresh install makes them; old ids parse as before.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=upgrade$version
current=$(extension_version)
start "$name" $((port_base + 42))
db() { local database=$1; shift; sql "$name" "$@" -d "$database"; }
db postgres "CREATE DATABASE old" -c "CREATE DATABASE fresh" -c "CREATE DATABASE bare"

# 0.1.0's objects, a table filled by snowflake_next(), and what its ids parse to: the new
# library serves 0.1.0's objects until the update, 0.1.0's snowflake_parts included.
db old "CREATE EXTENSION snowflake_pg VERSION '0.1.0'" \
  -c "CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), note text)" \
  -c "INSERT INTO orders (note) SELECT 'before ' || g FROM generate_series(1, 10000) g" \
  -c "CREATE TABLE parsed_before AS SELECT id, (snowflake_parse(id)).* FROM orders"
[[ $(db old "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'") == 0.1.0 ]] ||
  fail "the database is not on 0.1.0"

db old "ALTER EXTENSION snowflake_pg UPDATE"
[[ $(db old "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'") == "$current" ]] ||
  fail "ALTER EXTENSION snowflake_pg UPDATE did not reach $current"

# Old ids parse as before, to every part; new rows get greater ids.
changed=$(db old "SELECT count(*) FROM parsed_before b
  WHERE (b.ts, b.node_id, b.backend_slot, b.worker_id, b.sequence) IS DISTINCT FROM
        (SELECT (p.ts, p.node_id, p.backend_slot, p.worker_id, p.sequence)
         FROM snowflake_parse(b.id) p)")
((changed == 0)) || fail "$changed old ids parse differently after the update"
db old "INSERT INTO orders (note) SELECT 'after ' || g FROM generate_series(1, 5000) g"
[[ $(db old "SELECT count(DISTINCT id) FROM orders") == 15000 ]] || fail "duplicate ids in orders"
[[ $(db old "SELECT min(id) FILTER (WHERE note LIKE 'after %') > max(id) FILTER (WHERE note NOT LIKE 'after %') FROM orders") == t ]] ||
  fail "ids minted after the update are not above the earlier ones"

# Every function answers in the updated database.
answers=$(db old "SELECT (snowflake_parse(id)).gene = 0 FROM orders LIMIT 1" \
  -c "SELECT snowflake_compose(ts, node_id, backend_slot, sequence) = id FROM parsed_before LIMIT 1" \
  -c "SELECT snowflake_parse(id, snowflake_layout()) = snowflake_parse(id) FROM orders LIMIT 1" \
  -c "SELECT snowflake_decode(snowflake_encode(id, 'base62'), 'base62') = id FROM orders LIMIT 1" \
  -c "SELECT snowflake_at(now(), 7) >= snowflake_floor(now())" \
  -c "SELECT lower = snowflake_floor('2026-01-01') FROM snowflake_bounds('2026-01-01', '2026-01-02')" \
  -c "SELECT node_claimed FROM snowflake_status" \
  -c "SELECT count(*) = 1 FROM snowflake_nodes" \
  -c "CREATE TABLE legacy (id serial PRIMARY KEY)" -c "INSERT INTO legacy DEFAULT VALUES" \
  -c "SELECT count(*) > 0 FROM snowflake_convert('legacy', 'id')")
[[ $(sort -u <<<"$answers") == t ]] || fail "a function gave a wrong answer after the update: $answers"

# The updated objects equal a fresh install's: pg_dump --binary-upgrade lists every
# member of the extension; object ids, xids and the dump's random key differ by nature.
db fresh "CREATE EXTENSION snowflake_pg"
db bare "CREATE EXTENSION snowflake_pg VERSION '0.1.0'" -c "ALTER EXTENSION snowflake_pg UPDATE"
diff <(extension_schema "$name" fresh) <(extension_schema "$name" bare) >"$CLUSTERS_DIR/$name/schema.diff" ||
  fail "the updated schema differs from a fresh $current install: $(head -20 "$CLUSTERS_DIR/$name/schema.diff")"
members=$(db fresh "SELECT count(*) FROM pg_depend WHERE refclassid = 'pg_extension'::regclass
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake_pg') AND deptype = 'e'")
figure "0.1.0 -> $current: 10,000 ids minted on 0.1.0's objects parse the same after the update, 5,000 minted after it lie above them; the updated schema equals a fresh install ($members objects, pg_dump --binary-upgrade)"
check_log "$name"
