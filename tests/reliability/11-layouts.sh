#!/usr/bin/env bash
# Server layouts (snowflake.layout, with preload). A gene layout with few sequence bits:
# snowflake_next(key) keeps the key's low bits, ids of orders land in the partition of
# their user (the seed-004 case of 16 tables), and many clients at once borrow ticks
# and meet the lead bound. The js53 layout: ids a JavaScript client reads exactly. And
# the mistakes: a bad layout stops the server, a node_bits that disagrees too.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
gene_layout='time:41, node:2, slot:8, sequence:8, gene:4'

# --- A gene layout ---------------------------------------------------------------------
name=gene$version port=$((port_base + 17))
start "$name" "$port" shared_preload_libraries=snowflake_pg "snowflake.layout='$gene_layout'"
sql "$name" "CREATE EXTENSION snowflake_pg"
[[ $(sql "$name" "SELECT snowflake_layout()") == "$gene_layout" ]] || fail "snowflake_layout() is not '$gene_layout'"

# The gene is the key's low 4 bits for every key, negatives and extremes included, and
# the ids of one backend still increase.
wrong=$(sql "$name" "SELECT count(*) FILTER (WHERE id % 16 <> k & 15 OR id <= prev)
  FROM (SELECT k, id, lag(id, 1, 0::bigint) OVER (ORDER BY n) AS prev
    FROM (SELECT n, k, snowflake_next(k) AS id FROM (SELECT n, CASE n % 4
      WHEN 0 THEN (random() * 9e18)::bigint WHEN 1 THEN -(random() * 9e18)::bigint
      WHEN 2 THEN n - 50000 ELSE (ARRAY[-9223372036854775808, 9223372036854775807, -1, 0]::bigint[])[n % 16 / 4 + 1] END AS k
      FROM generate_series(1, 200000) n) keys OFFSET 0) minted) s")
[[ $wrong == 0 ]] || fail "$wrong of 200000 ids lost their key's low bits or did not increase"

# Users spread over 16 partitions by the low bits of their ids; orders minted with
# their user's id as the gene land in the same partition number, through a trigger or
# through INSERT ... VALUES (snowflake_next(\$1), \$1, ...).
sql "$name" "CREATE SEQUENCE user_spread;
  CREATE TABLE users (id bigint NOT NULL DEFAULT snowflake_next(nextval('user_spread')), name text)
    PARTITION BY LIST ((id % 16));
  CREATE TABLE orders (id bigint NOT NULL, user_id bigint NOT NULL, via text NOT NULL)
    PARTITION BY LIST ((id % 16));
  DO \$\$ BEGIN FOR p IN 0..15 LOOP
    EXECUTE format('CREATE TABLE users_%s PARTITION OF users (PRIMARY KEY (id)) FOR VALUES IN (%s)', p, p);
    EXECUTE format('CREATE TABLE orders_%s PARTITION OF orders (PRIMARY KEY (id)) FOR VALUES IN (%s)', p, p);
  END LOOP; END \$\$;
  CREATE FUNCTION order_id() RETURNS trigger LANGUAGE plpgsql AS \$\$
    BEGIN NEW.id := snowflake_next(NEW.user_id); RETURN NEW; END \$\$;
  CREATE TABLE orders_in (LIKE orders);
  CREATE TRIGGER order_id BEFORE INSERT ON orders_in FOR EACH ROW EXECUTE FUNCTION order_id();
  INSERT INTO users (name) SELECT 'user ' || g FROM generate_series(1, 1600) g"
script=$CLUSTERS_DIR/$name/orders.sql
cat >"$script" <<'SQL'
\set user random(1, 1600)
SELECT id AS user_id FROM users ORDER BY id OFFSET :user - 1 LIMIT 1 \gset
INSERT INTO orders VALUES (snowflake_next(:user_id), :user_id, 'values');
WITH moved AS (INSERT INTO orders_in (user_id, via) SELECT :user_id, 'trigger' FROM generate_series(1, 20) RETURNING *)
INSERT INTO orders SELECT * FROM moved;
SQL
read -r _ transactions failed <<<"$(pgbench_run "$name" -c 16 -j 2 -T 10 -f "$script")"
[[ $failed == 0 ]] || fail "$failed order transactions failed"
orders=$(check_distinct "$name" orders)
((orders == 21 * transactions)) || fail "$orders orders for $transactions transactions of 21"
apart=$(sql "$name" "SELECT count(*) FROM orders o JOIN users u ON u.id = o.user_id
  WHERE split_part(o.tableoid::regclass::text, '_', 2) <> split_part(u.tableoid::regclass::text, '_', 2)")
[[ $apart == 0 ]] || fail "$apart orders are not in their user's partition"
partitions=$(sql "$name" "SELECT count(DISTINCT tableoid) FROM orders")
((partitions == 16)) || fail "orders fill $partitions partitions, not 16"
ways=$(sql "$name" "SELECT count(DISTINCT via) FROM orders")
[[ $ways == 2 ]] || fail "orders came through $ways ways, not 2"
figure "gene layout '$gene_layout': 200000 keys (random, negative, extremes) kept in the" \
  "low 4 bits; 16 clients for 10 s, $orders orders through a trigger and INSERT ... VALUES," \
  "0 duplicates, each in its user's partition of 16"

# A burst on 8 sequence bits: 256 ids per ms per backend, so 1,000,000 ids borrow about
# 3.9 s of ticks, meet the 1 s lead bound, and then wait for the clock.
IFS='|' read -r rows distinct lead ms <<<"$(sql "$name" "SELECT count(*), count(DISTINCT id),
  max(lead), round(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)
  FROM (SELECT id, CASE WHEN g % 1000 = 0
      THEN ceil(extract(epoch FROM (snowflake_parse(id)).ts - clock_timestamp()) * 1000)::bigint END AS lead
    FROM (SELECT g, snowflake_next(g) AS id FROM generate_series(1, 1000000) g OFFSET 0) s) t")"
((rows == 1000000 && distinct == rows)) || fail "$distinct distinct ids of $rows in one burst"
((lead <= 1000)) || fail "the burst ran $lead ms ahead of the clock, past the 1000 ms bound"
((ms >= 2500)) || fail "1000000 ids at 256 per ms took only $ms ms: the bound did not hold them back"
check_log "$name"
figure "gene layout, one backend: 1000000 ids at 256 per ms in $ms ms, at most $lead ms" \
  "ahead of the clock (bound 1000), all distinct"
cluster_stop "$name"

# --- js53: ids a JavaScript client reads exactly -----------------------------------------
name=js53-$version port=$((port_base + 18))
start "$name" "$port" shared_preload_libraries=snowflake_pg snowflake.layout=js53
sql "$name" "CREATE EXTENSION snowflake_pg; $minted_table"
script=$CLUSTERS_DIR/$name/insert.sql
echo "INSERT INTO minted SELECT FROM generate_series(1, 100);" >"$script"
read -r _ _ failed <<<"$(pgbench_run "$name" -c 8 -j 2 -T 5 -f "$script")"
[[ $failed == 0 ]] || fail "$failed js53 transactions failed"
rows=$(check_distinct "$name" minted)
# node reads the ids as JSON numbers, as a browser or a Node.js client of a JSON API
# does, and compares each with its exact decimal text. A default-layout id, past 2^53,
# must fail the same check: it is what the layout is for.
js_check() { # QUERY: prints "exact N of M"
  sql "$name" "SELECT json_agg(json_build_object('id', id, 'text', id::text)) FROM ($1) ids" |
    node "$(dirname "${BASH_SOURCE[0]}")/json-exact.js"
}
exact=$(js_check "SELECT id FROM minted")
[[ $exact == "exact $rows of $rows" ]] || fail "a JavaScript client read js53 ids inexactly: $exact"
inexact=$(js_check "SELECT snowflake_compose(now(), 0, 1, 1, 0, 'default') AS id")
[[ $inexact == "exact 0 of 1" ]] || fail "a default-layout id read exactly in JavaScript: $inexact"
max=$(sql "$name" "SELECT max(id) <= 2^53 - 1 FROM minted")
[[ $max == t ]] || fail "a js53 id is past 2^53 - 1"
check_log "$name"
figure "js53: $rows ids from 8 clients, all at most 2^53 - 1, read exactly by node as JSON" \
  "numbers (a default-layout id is not: the check can fail)"
cluster_stop "$name"

# --- Mistakes ------------------------------------------------------------------------------
port=$((port_base + 19)) checked=0
no_start() { # NAME PATTERN SETTINGS...: the server refuses to start, its log saying PATTERN
  local name=$1 pattern=$2; shift 2
  start "$name" "$port" shared_preload_libraries=snowflake_pg "$@" >/dev/null 2>&1 && fail "$name started"
  grep -qE -e "$pattern" "$CLUSTERS_DIR/$name/server.log" ||
    fail "$name: the log does not say /$pattern/: $(tail -3 "$CLUSTERS_DIR/$name/server.log")"
  checked=$((checked + 1))
}
no_start "layout-sum$version" 'invalid layout "time:41, node:2, slot:8, sequence:11": the widths add up to 62' \
  "snowflake.layout='time:41, node:2, slot:8, sequence:11'"
no_start "layout-epoch$version" 'invalid layout "discord": the server.s ids count from snowflake.epoch' \
  snowflake.layout=discord
no_start "layout-node-bits$version" "snowflake.node_bits = 3 disagrees with snowflake.layout = 'default', which has 2 node bits" \
  snowflake.layout=default snowflake.node_bits=3
no_start "layout-slots$version" 'a server.s layout has at most 12 slot bits' \
  "snowflake.layout='time:40, slot:13, sequence:10'"
# Agreeing settings start. A layout of 32 slots mints on a server of 100 connections, the
# slots going by need: of 40 backends minting at once, the 8 beyond them are refused.
name=layout-narrow$version
start "$name" "$port" shared_preload_libraries=snowflake_pg snowflake.node_bits=5 \
  "snowflake.layout='time:41, node:5, slot:5, sequence:12'"
[[ $(sql "$name" "CREATE EXTENSION snowflake_pg" -c "SELECT snowflake_next() > 0") == t ]] ||
  fail "a 32-slot layout did not mint on a server of 100 connections"
script=$CLUSTERS_DIR/$name/hold.sql
printf 'SELECT snowflake_next();\nSELECT pg_sleep(2);\n' >"$script"
PGBENCH_LOG=$CLUSTERS_DIR/$name/pgbench.log pgbench_run "$name" --aborts -c 40 -j 2 -t 1 -f "$script" >/dev/null ||
  fail "pgbench failed otherwise than by clients refused a slot"
refused=$(grep -c 'no minting slot is free: all 32 slots of the 5 slot bits of snowflake.layout are held' \
  "$CLUSTERS_DIR/$name/pgbench.log" || true)
((refused == 8)) || fail "40 backends on 32 slots: $refused refused, not 8: $(grep -m2 ERROR "$CLUSTERS_DIR/$name/pgbench.log")"
checked=$((checked + 1))
cluster_stop "$name"
# Without preload, the layout is refused at the first call, never ignored.
name=layout-stock$version
start "$name" "$port" "snowflake.layout=js53"
out=$(sql "$name" "CREATE EXTENSION snowflake_pg" -c "SELECT snowflake_next()" 2>&1) && fail "a stock server minted with a layout set"
grep -q 'snowflake.layout = "js53" is set, but snowflake_pg is not in shared_preload_libraries' <<<"$out" ||
  fail "unexpected error: $out"
checked=$((checked + 1))
check_log "$name"
figure "$checked layout mistakes (bad widths, an epoch, node_bits disagreeing, too many or" \
  "too few slot bits, no preload): each refused with a message naming the setting"
