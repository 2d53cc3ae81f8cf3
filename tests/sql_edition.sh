#!/usr/bin/env bash
# The SQL edition (snowflake_sql, sql_edition/), tested against real servers of one
# PostgreSQL major: bash tests/sql_edition.sh 15|16|17|18. It builds the edition's release
# files, installs them the ways managed services allow (psql -f into a schema, and pg_tle's
# CREATE EXTENSION) as a role like RDS's master user (CREATEROLE, CREATEDB, pgtle_admin, not
# superuser), mints as a plain role, and checks each promise of docs/managed.md: the same
# ids, parts and errors as the native extension on the same server (when it is installed),
# uniqueness and order under 200 concurrent sessions that reconnect, ROLLBACK, a spent tick,
# a clock stepped back, poolers, read-only transactions, a hot standby, a failover to a
# standby whose clock is behind, settings a plain role cannot change, node-id claims, an
# upgrade, the order of ids (each slot's first id of a tick at the clock), an update from
# the previous release's files and the move to the new order, and moving a database to
# the native extension and back. Each check prints an
# `ok` line; the first failure prints a FAIL line and exits non-zero. pg_tle parts say SKIP
# where scripts/setup-pg_tle.sh could not install it; native comparisons say SKIP where the
# native extension is not installed (scripts/lib.sh's install_extension V installs it).
# Ports 6000+(V-15)*20 to 6019+(V-15)*20, clusters named sqled*.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
source "$here/../scripts/lib.sh"
version=${1:?usage: $0 15|16|17|18}
pg_major "$version" >/dev/null || exit 2
base=$((6000 + (version - 15) * 20))
bin=$(pg_bin_of "$version")
pg_config=$(pg_config_of "$version")
start_time=$SECONDS
out=$CLUSTERS_DIR/sqled$version-release
main=sqled$version-main         # port base: pg_tle preloaded, every single-server check
clock=sqled$version-clock       # base+1: a clock libfaketime moves; the failover primary
standby=sqled$version-standby   # base+2: its standby, 1 s behind, promoted
behind=sqled$version-behind     # base+3: another standby, 10 s behind, promoted
bouncer=sqled$version-bouncer   # base+4: pgbouncer in front of main
# libfaketime's library, wherever Debian's package put it (scripts/setup.sh installs it).
faketime_lib=$(dpkg -L libfaketime 2>/dev/null | grep -m1 '/libfaketime\.so\.1$') || true

# The clusters of an earlier run go first, logs included: lib.sh's cluster_fresh would
# otherwise read their logs into the internal-error record of a tests/run.sh run. Moved
# aside at once and deleted in the background: deleting takes seconds on a busy disk.
for name in "$main" "$clock" "$standby" "$behind"; do
  cluster_stop "$name" 2>/dev/null || true
  if [[ -d $CLUSTERS_DIR/$name ]]; then
    mv "$CLUSTERS_DIR/$name" "$CLUSTERS_DIR/$name.old.$$" && (rm -rf "${CLUSTERS_DIR:?}/$name.old.$$" &)
  fi
done
servers=()
cleanup() {
  local name
  pgbouncer_stop "$bouncer" 2>/dev/null || true
  for name in "${servers[@]}"; do cluster_stop "$name" 2>/dev/null || true; done
}
trap cleanup EXIT

fail() { echo "FAIL sql_edition pg$version: $*" >&2; exit 1; }
# ok TEXT: a check passed; with the seconds since the start.
ok() { echo "ok $* [$((SECONDS - start_time)) s]"; }
skip() { echo "SKIP $*"; }

# q NAME DB ROLE QUERY: QUERY in one session of database DB of cluster NAME as ROLE.
q() { sql "$1" "$4" -d "$2" -U "$3"; }

# expect_error NAME DB ROLE SQLSTATE PATTERN QUERY: QUERY fails with SQLSTATE and a
# message matching PATTERN (an extended regular expression over the verbose report).
expect_error() {
  local out
  out=$(sql "$1" "$6" -d "$2" -U "$3" -v VERBOSITY=verbose 2>&1) && fail "no error for: $6"
  grep -qE -- "ERROR:  $4: " <<<"$out" || fail "for $6, expected SQLSTATE $4, got: $out"
  grep -qE -- "$5" <<<"${out//$'\n'/ }" || fail "for $6, expected /$5/, got: $out"
}

# --- Release files and servers ----------------------------------------------------------

# As scripts/package.sh makes them (sql_edition_files): the pg_tle file registers an update
# path from every earlier release.
sql_edition_files "$out" >/dev/null
release=$(sql_edition_version)
# The next release (the patch number one up), built from the same source under that
# version: the upgrade path of a psql -f install and of pg_tle.
next=${release%.*}.$((${release##*.} + 1))
sql_edition_files "$out" "$next" >/dev/null
psql_script=$out/snowflake_sql--$release.sql
ok "built $(basename "$psql_script"), snowflake_sql--$release--pg_tle.sql and $next with an update path"

# pg_tle counts when scripts/setup-pg_tle.sh installed it and the server can load it: every
# symbol the library needs from the server is one this major's postgres exports.
have_tle=false
tle_lib=$("$pg_config" --pkglibdir)/pg_tle.so
if [[ -f $tle_lib ]] && [[ -z $(comm -23 <(nm -D --undefined-only "$tle_lib" | awk '$1 == "U" && $2 !~ /@/ { print $2 }' | sort -u) \
    <(nm -D --defined-only "$bin/postgres" | awk '{ print $3 }' | sort -u)) ]]; then
  have_tle=true
fi
have_native=false
[[ -f $("$pg_config" --pkglibdir)/snowflake_pg.so && -f $("$pg_config" --sharedir)/extension/snowflake_pg.control ]] &&
  have_native=true

preload=()
$have_tle && preload=(shared_preload_libraries=pg_tle)
servers+=("$main")
# 215 connections: the native extension without preload numbers every backend slot of
# the server in its 256 slots (docs: up to 234 connections on 15 to 17, 220 on 18).
# fsync off: throwaway servers, and the disk is shared with other test runs.
cluster_start "$main" "$version" "$base" max_connections=215 autovacuum=off fsync=off "${preload[@]}" >/dev/null

# The roles of a managed service: the master user (CREATEROLE, CREATEDB, not superuser,
# with pgtle_admin where pg_tle is) and an application role with no privilege of its own.
sql "$main" "CREATE ROLE master LOGIN CREATEROLE CREATEDB" -c "CREATE ROLE app LOGIN"
# db NAME: a database of main owned by the master user, as a managed service's are.
db() { sql "$main" "CREATE DATABASE $1 OWNER master"; }
# install_psql NAME DB [SCHEMA]: the psql -f install by the master user.
install_psql() {
  cluster_psql "$1" -q -d "$2" -U master -v schema="${3:-snowflake}" -f "${4:-$psql_script}" >/dev/null 2>&1 ||
    fail "psql -f install into $2: $(cluster_psql "$1" -q -d "$2" -U master -v schema="${3:-snowflake}" -f "${4:-$psql_script}" 2>&1 | grep -m3 -E 'ERROR|WARNING')"
}

# --- Install by a non-superuser with psql -f; a plain role mints -------------------------

db conform
install_psql "$main" conform sqled
[[ $(q "$main" conform postgres "SELECT rolsuper FROM pg_roles r JOIN pg_namespace n ON n.nspowner = r.oid WHERE nspname = 'sqled'") == f ]] ||
  fail "the schema is not the master user's"
[[ $(q "$main" conform app "SELECT sqled.snowflake_next() > 0, sqled.snowflake_sql_version()") == "t|$release" ]] ||
  fail "a plain role cannot mint after a psql -f install"
ok "psql -f install into schema sqled by a non-superuser; a plain role mints"

# --- The same ids, parts and errors as the native extension ------------------------------

if $have_native; then
  sql "$main" "CREATE EXTENSION snowflake_pg" -d conform
  # Labels: the same volatility, strictness and parallel safety, but for snowflake_next and
  # snowflake_server_status, parallel unsafe in the SQL edition (nextval is, and a read of
  # the status sets the day of its warning in a setting).
  differ=$(q "$main" conform postgres "
    SELECT string_agg(format('%s(%s): %s/%s/%s vs %s/%s/%s', n.proname, pg_get_function_identity_arguments(n.oid),
                             n.provolatile, n.proisstrict, n.proparallel, s.provolatile, s.proisstrict, s.proparallel), '; ')
      FROM pg_proc n JOIN pg_proc s ON s.proname = n.proname
       AND pg_get_function_identity_arguments(s.oid) = pg_get_function_identity_arguments(n.oid)
     WHERE n.pronamespace = 'public'::regnamespace AND s.pronamespace = 'sqled'::regnamespace
       AND (n.provolatile, n.proisstrict, n.proparallel) <> (s.provolatile, s.proisstrict, s.proparallel)
       AND n.proname NOT IN ('snowflake_next', 'snowflake_server_status')")
  [[ -z $differ ]] || fail "labels differ from the native's: $differ"
  lacking=$(q "$main" conform postgres "
    SELECT string_agg(n.proname || '(' || pg_get_function_identity_arguments(n.oid) || ')', ', ')
      FROM pg_proc n WHERE n.pronamespace = 'public'::regnamespace AND n.proname LIKE 'snowflake%'
       AND n.proname NOT IN ('snowflake_claim_node', 'snowflake_server_status')
       AND NOT EXISTS (SELECT FROM pg_proc s WHERE s.pronamespace = 'sqled'::regnamespace AND s.proname = n.proname
                         AND pg_get_function_identity_arguments(s.oid) = pg_get_function_identity_arguments(n.oid)
                         AND replace(pg_get_function_result(s.oid), 'sqled.', '') = pg_get_function_result(n.oid))")
  [[ -z $lacking ]] || fail "native functions the SQL edition lacks or types otherwise: $lacking"
  ok "every native function has its SQL edition twin, with the same labels (snowflake_next, snowflake_server_status: parallel unsafe)"

  # Values: random inputs per function, the edges included, compared whole: 100,000, or
  # SQLED_INPUTS (tests/run.sh gives the majors it tests less deeply 25,000; at least
  # 20,000 are checked of each).
  cluster_psql "$main" -qAt -d conform -v inputs="${SQLED_INPUTS:-100000}" >/dev/null <<'SQL' || fail "building the inputs"
CREATE TABLE times AS
  SELECT timestamptz '2020-01-01 00:00:00+00' + random() * (timestamptz '2089-09-06 15:47:35.551+00' - timestamptz '2020-01-01 00:00:00+00') AS ts,
         (random() * 4194303)::bigint AS uid
    FROM generate_series(1, :inputs);
INSERT INTO times VALUES ('2020-01-01 00:00:00+00', 0), ('2020-01-01 00:00:00.000999+00', 4194303),
  ('2089-09-06 15:47:35.551+00', 4194303), ('2089-09-06 15:47:35.551999+00', 0), ('2024-02-29 23:59:59.999999+00', 1);
CREATE TABLE ids AS
  SELECT ((random() * 2147483647)::bigint << 32 | (random() * 4294967295)::bigint) AS id FROM generate_series(1, :inputs);
INSERT INTO ids VALUES (0), (1), (9223372036854775807), (4194303), (4194304), (9223372036850581504);
SQL
  # encode and decode: half the ids in each text form; bounds (floor twice) on 20,000 times.
  for check in \
    "floor|public.snowflake_floor(ts)|sqled.snowflake_floor(ts)|times" \
    "at|public.snowflake_at(ts, uid)|sqled.snowflake_at(ts, uid)|times" \
    "bounds|public.snowflake_bounds(ts, ts + interval '1 hour')|sqled.snowflake_bounds(ts, ts + interval '1 hour')|(SELECT * FROM times WHERE ts < '2089-09-06 14:00+00' LIMIT 20000) t" \
    "parse|public.snowflake_parse(id)::text|sqled.snowflake_parse(id)::text|ids" \
    "compose|public.snowflake_compose(ts, (uid % 4)::int, (uid % 256)::int, (uid % 4096)::int)|sqled.snowflake_compose(ts, (uid % 4)::int, (uid % 256)::int, (uid % 4096)::int)|times" \
    "encode|public.snowflake_encode(id, f)|sqled.snowflake_encode(id, f)|(SELECT id, CASE WHEN id % 2 = 0 THEN 'base32' ELSE 'base62' END AS f FROM ids) t" \
    "decode|public.snowflake_decode(CASE f WHEN 'base32' THEN lower(e) ELSE e END, f)|sqled.snowflake_decode(CASE f WHEN 'base32' THEN lower(e) ELSE e END, f)|(SELECT public.snowflake_encode(id, f) AS e, f FROM (SELECT id, CASE WHEN id % 2 = 0 THEN 'base32' ELSE 'base62' END AS f FROM ids) i) t"; do
    IFS='|' read -r name native edition table <<<"$check"
    counts=$(q "$main" conform postgres "SELECT count(*), count(*) FILTER (WHERE ($native) IS DISTINCT FROM ($edition)) FROM $table")
    [[ $counts == *"|0" && ${counts%|*} -ge 20000 ]] || fail "$name differs from the native on $counts (inputs|differing)"
    ok "$name: the native's result on ${counts%|*} random inputs, edges included"
  done
  [[ $(q "$main" conform postgres "SELECT public.snowflake_layout() = sqled.snowflake_layout()") == t ]] ||
    fail "snowflake_layout differs"

  # Other layouts: presets, specs and epochs, each field at 0 and at its maximum, and random
  # ids of the layout's width, through parse(id, layout) and compose(..., layout).
  layouts=("default" "worker-first" "js53" "twitter" "discord" "instagram" "sonyflake"
    "time:41, node:2, slot:8, sequence:8, gene:4" "time:63/1s" "time:1, node:31, slot:31"
    "time:37/10ms, slot:16" "time:22/1s, node:10, slot:10, sequence:10, gene:11"
    "time:31, sequence:31, gene:1, epoch:1970-01-01" "time:45/10ms, sequence:18, epoch:2024-02-29 12:00:00+05:30"
    "time:40, node:3, slot:5, sequence:5, epoch:2001-09-09T01:46:40.123Z" "time:43, gene:10")
  # And random layouts, as snowflake_core's property tests make them: node, slot and
  # sequence each present two times in three, in any order, a gene one time in three,
  # widths adding up to 63 or 53, any unit. The seed is printed, to run a failure again.
  seed=${SQLED_SEED:-$$}
  RANDOM=$seed
  for _ in $(seq 15); do
    total_bits=$((RANDOM % 4 == 0 ? 53 : 63)) left=0 fields=() spec=""
    left=$total_bits
    for field in node slot sequence; do
      if ((RANDOM % 3 > 0)); then
        width=$((RANDOM % ((left - 1 < 31 ? left - 1 : 31) + 1)))
        fields+=("$field:$width") left=$((left - width))
      fi
    done
    for ((i = ${#fields[@]} - 1; i > 0; i--)); do
      j=$((RANDOM % (i + 1))) swap=${fields[i]}
      fields[i]=${fields[j]} fields[j]=$swap
    done
    if ((RANDOM % 3 == 0 && left > 1)); then
      width=$((RANDOM % ((left - 1 < 31 ? left - 1 : 31) + 1)))
      fields+=("gene:$width") left=$((left - width))
    fi
    units=("" "/10ms" "/1s")
    spec="time:$left${units[RANDOM % 3]}"
    for field in "${fields[@]}"; do spec+=", $field"; done
    layouts+=("$spec")
  done
  total=0
  for layout in "${layouts[@]}"; do
    # Random ids of the layout, their time below 2^43 ms from the epoch (about 278 years,
    # short of where a timestamptz ends), with 0 and each field at its maximum among them.
    counts=$(q "$main" conform postgres "
      WITH l AS (SELECT '$layout'::text AS layout, sqled.snowflake_sql_read_layout('$layout') AS f),
           m AS (SELECT layout, (f).time_shift AS shift,
                        least(9223372036854775807 >> (63 - (f).time_bits), (8796093022208 / (f).unit_ms) - 1) AS max_ticks FROM l),
           i AS (SELECT ((id >> 20) % (max_ticks + 1) << shift) | (id & ((1::bigint << shift) - 1)) AS id
                   FROM (SELECT id FROM ids LIMIT 600) r, m
                 UNION ALL SELECT 0 UNION ALL SELECT (1::bigint << shift) - 1 FROM m
                 UNION ALL SELECT (max_ticks << shift) | ((1::bigint << shift) - 1) FROM m),
           r AS MATERIALIZED (SELECT id, public.snowflake_parse(id, layout) AS n, sqled.snowflake_parse(id, layout) AS s FROM i, l)
      SELECT count(*), count(*) FILTER (WHERE n::text IS DISTINCT FROM s::text),
             count(*) FILTER (WHERE public.snowflake_compose((n).ts, (n).node_id, (n).backend_slot, (n).sequence, (n).gene, layout)
                                IS DISTINCT FROM sqled.snowflake_compose((s).ts, (s).node_id, (s).backend_slot, (s).sequence, (s).gene, layout))
        FROM r, l" 2>&1) || fail "layout '$layout': $counts"
    IFS='|' read -r rows parse_diff compose_diff <<<"$counts"
    ((parse_diff == 0 && compose_diff == 0 && rows > 0)) ||
      fail "layout '$layout': $parse_diff of $rows parse results and $compose_diff composes differ from the native's"
    total=$((total + rows))
  done
  ok "parse(id, layout) and compose(..., layout): the native's on $total ids over ${#layouts[@]} layouts (presets, specs, units, epochs; 15 random, seed $seed)"

  # Errors: the same SQLSTATE, message and detail for every bad input, native or SQL.
  cluster_psql "$main" -qAt -d conform >/dev/null <<'SQL' || fail "building the error cases"
CREATE FUNCTION try(expr text, schema text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  result text;
  state text; message text; detail text;
BEGIN
  EXECUTE format('SELECT (%s)::text', replace(expr, '@.', schema || '.')) INTO result;
  RETURN 'ok ' || coalesce(result, 'NULL');
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
  RETURN format('%s %s | %s', state, message, detail);
END
$$;
CREATE TABLE bad (expr text);
INSERT INTO bad VALUES
  ('@.snowflake_parse(-1)'), ('@.snowflake_parse(-9223372036854775808)'),
  ('@.snowflake_at(now(), 4194304)'), ('@.snowflake_at(now(), -1)'), ('@.snowflake_at(''-infinity'', 0)'),
  ('@.snowflake_floor(''infinity'')'), ('@.snowflake_floor(''2019-12-31 23:59:59.999+00'')'),
  ('@.snowflake_floor(''2089-09-06 15:47:35.551+00'')'), ('@.snowflake_floor(''2089-09-06 15:47:35.552+00'')'),
  ('@.snowflake_floor(''4713-01-01 BC'')'), ('@.snowflake_floor(''294276-12-31 23:59:59+00'')'),
  ('@.snowflake_floor(''12000-05-05 01:02:03.004+00'')'), ('@.snowflake_floor(''1999-12-31 23:59:59.9999+00'')'),
  ('@.snowflake_bounds(''2026-01-01'', ''2026-01-01'')'), ('@.snowflake_bounds(''2026-01-02'', ''2026-01-01'')'),
  ('@.snowflake_compose(now(), 4, 0, 0)'), ('@.snowflake_compose(now(), 0, 256, 0)'), ('@.snowflake_compose(now(), 0, 0, 4096)'),
  ('@.snowflake_compose(now(), 0, 0, 0, 1)'), ('@.snowflake_compose(now(), -1, 0, 0)'), ('@.snowflake_compose(now(), 0, -1, 0)'),
  ('@.snowflake_compose(''2019-01-01'', 0, 0, 0)'), ('@.snowflake_compose(NULL, 0, 0, 0)'), ('@.snowflake_compose(now(), NULL, 0, 0)'),
  ('@.snowflake_compose(NULL, 0, 0, 0, 0, ''nope'')'), ('@.snowflake_compose(now(), 0, 0, 0, 0, ''time:63/1s'')'),
  ('@.snowflake_compose(now(), 0, 0, 64, 0, ''js53'')'), ('@.snowflake_compose(now(), 0, 0, 0, 16, ''time:41, node:2, slot:8, sequence:8, gene:4'')'),
  ('@.snowflake_parse(9007199254740992, ''js53'')'), ('@.snowflake_parse(9223372036854775807, ''time:63/1s'')'),
  ('@.snowflake_parse(1, ''time:41, node:2, slot:8, sequence:12, epoch:3000-01-01'')'),
  ('@.snowflake_parse(1, ''time:41, node:2, slot:8, sequence:12, epoch:1969-12-31'')'),
  ('@.snowflake_parse(1, ''time:41, node:2, slot:8, sequence:12, epoch:yesterday'')'),
  ('@.snowflake_parse(1, ''time:41, node:2, slot:8, sequence:12, epoch:2020-02-30'')'),
  ('@.snowflake_parse(1, ''time:41, node:2, slot:8, sequence:12, epoch:2020-01-01, node:1'')'),
  ('@.snowflake_parse(1, '''')'), ('@.snowflake_parse(1, ''  '')'), ('@.snowflake_parse(1, ''nope'')'), ('@.snowflake_parse(1, '' Discord '')'),
  ('@.snowflake_parse(1, ''time:41,,node:22'')'), ('@.snowflake_parse(1, ''time:41, node'')'), ('@.snowflake_parse(1, ''time:41, nodes:22'')'),
  ('@.snowflake_parse(1, ''time:41, node:2, node:20'')'), ('@.snowflake_parse(1, ''time:41, gene:2, node:20'')'),
  ('@.snowflake_parse(1, ''node:22, time:41'')'), ('@.snowflake_parse(1, ''time:41/2ms, node:22'')'), ('@.snowflake_parse(1, ''time:41, node:22/1s'')'),
  ('@.snowflake_parse(1, ''time:x, node:22'')'), ('@.snowflake_parse(1, ''time:-41, node:22'')'), ('@.snowflake_parse(1, ''time:+41, node:22'')'),
  ('@.snowflake_parse(1, ''time:99999999999, node:22'')'), ('@.snowflake_parse(1, ''time:0, node:31, slot:31, sequence:1'')'),
  ('@.snowflake_parse(1, ''time:64'')'), ('@.snowflake_parse(1, ''time:41, node:32'')'), ('@.snowflake_parse(1, ''time:41, node:21'')'),
  ('@.snowflake_parse(1, ''epoch:2020-01-01'')'), ('@.snowflake_parse(1, ''time:41 , node : 22 '')'), ('@.snowflake_parse(1, ''TWITTER'')'),
  ('@.snowflake_parse(1, '' Worker-First '')'), ('@.snowflake_parse(1, ''worker first'')'),
  ('@.snowflake_encode(-1)'), ('@.snowflake_encode(1, ''base64'')'), ('@.snowflake_encode(1, ''BASE62'')'),
  ('@.snowflake_decode(''0'')'), ('@.snowflake_decode(''00000000000000'')'), ('@.snowflake_decode(''000000000000U'')'),
  ('@.snowflake_decode(''00000000000' || chr(9) || ''')'), ('@.snowflake_decode(''ZZZZZZZZZZZZZ'')'), ('@.snowflake_decode(''7ZZZZZZZZZZZZ'')'),
  ('@.snowflake_decode(''8000000000000'')'), ('@.snowflake_decode(''oOiIlL0000000'')'), ('@.snowflake_decode(''AzL8n0Y58m8'', ''base62'')'),
  ('@.snowflake_decode(''AzL8n0Y58m7'', ''base62'')'), ('@.snowflake_decode(''zzzzzzzzzzz'', ''base62'')'), ('@.snowflake_decode(''0000000000-'', ''base62'')'),
  ('@.snowflake_decode(''00000000000'', ''base16'')'), ('@.snowflake_decode(''ÄÄÄÄÄÄÄÄÄÄÄÄÄ'')'),
  ('@.snowflake_next(NULL)'), ('@.snowflake_next(5)');
-- Random bad and good inputs: uids, ids and parts around the bounds.
INSERT INTO bad SELECT format('@.snowflake_at(''2026-01-01'', %s)', (random() * 16777216)::bigint - 8388608) FROM generate_series(1, 300);
INSERT INTO bad SELECT format('@.snowflake_parse(%s, ''js53'')', (random() * 18014398509481984)::bigint - 4503599627370496) FROM generate_series(1, 300);
INSERT INTO bad SELECT format('@.snowflake_compose(''2026-01-01'', %s, %s, %s)', (random() * 8)::int - 2, (random() * 512)::int - 128, (random() * 8192)::int - 2048) FROM generate_series(1, 300);
INSERT INTO bad SELECT format('@.snowflake_floor(%L)', timestamptz '2019-12-31' + random() * interval '100 years') FROM generate_series(1, 300);
SQL
  mismatches=$(q "$main" conform postgres "SELECT count(*) FROM bad WHERE try(expr, 'public') IS DISTINCT FROM try(expr, 'sqled')")
  if [[ $mismatches != 0 ]]; then
    q "$main" conform postgres "SELECT expr, try(expr, 'public'), try(expr, 'sqled') FROM bad
      WHERE try(expr, 'public') IS DISTINCT FROM try(expr, 'sqled') LIMIT 5" >&2
    fail "$mismatches bad inputs get another result or error than from the native"
  fi
  cases=$(q "$main" conform postgres "SELECT count(*), count(*) FILTER (WHERE try(expr, 'sqled') NOT LIKE 'ok %') FROM bad")
  ok "errors: the native's SQLSTATE, message and detail for ${cases%|*} inputs (${cases#*|} of them refused)"

  # Ids of either edition parse alike under the other.
  same=$(q "$main" conform app "WITH m AS (SELECT sqled.snowflake_next() AS id FROM generate_series(1, 2000))
    SELECT count(*) FILTER (WHERE public.snowflake_parse(id)::text = sqled.snowflake_parse(id)::text) FROM m")
  [[ $same == 2000 ]] || fail "SQL edition ids parse otherwise under the native ($same of 2000 alike)"
  same=$(q "$main" conform postgres "WITH m AS (SELECT public.snowflake_next() AS id FROM generate_series(1, 2000))
    SELECT count(*) FILTER (WHERE public.snowflake_parse(id)::text = sqled.snowflake_parse(id)::text) FROM m")
  [[ $same == 2000 ]] || fail "native ids parse otherwise under the SQL edition ($same of 2000 alike)"
  ok "2,000 ids of each edition parse identically under the other"

  # The status view has the native's columns; snowflake_convert, the native's SQL, makes
  # the same changes to the same tables (a serial key and a foreign key to it).
  columns=$(q "$main" conform postgres "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
    FROM pg_attribute WHERE attrelid = 'public.snowflake_status'::regclass AND attnum > 0
    UNION ALL SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
    FROM pg_attribute WHERE attrelid = 'sqled.snowflake_status'::regclass AND attnum > 0")
  [[ $(sed -n 1p <<<"$columns") == "$(sed -n 2p <<<"$columns")" ]] || fail "snowflake_status columns differ: $columns"
  converted=$(q "$main" conform postgres "
    CREATE TABLE conv_n (id serial PRIMARY KEY); CREATE TABLE conv_n_child (parent int REFERENCES conv_n);
    CREATE TABLE conv_s (id serial PRIMARY KEY); CREATE TABLE conv_s_child (parent int REFERENCES conv_s);
    INSERT INTO conv_n DEFAULT VALUES; INSERT INTO conv_s DEFAULT VALUES;
    SELECT (SELECT string_agg(replace(format('%s %s %s', table_name, column_name, change), 'conv_n', 'conv'), '; ')
              FROM public.snowflake_convert('conv_n', 'id'))
         = (SELECT string_agg(replace(format('%s %s %s', table_name, column_name, change), 'conv_s', 'conv'), '; ')
              FROM sqled.snowflake_convert('conv_s', 'id'));
    SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d WHERE d.adrelid = 'conv_s'::regclass;
    INSERT INTO conv_s DEFAULT VALUES RETURNING id > 1")
  [[ $converted == $'t\nsqled.snowflake_next()\nt' ]] || fail "snowflake_convert: $converted"
  ok "the status view has the native's columns; snowflake_convert makes the native's changes, the key then defaults to the SQL edition's snowflake_next()"
else
  skip "native comparisons: snowflake_pg is not installed in PostgreSQL $version (source scripts/lib.sh; install_extension $version)"
fi

# --- The order of ids: a slot's sequence starts each tick at the clock ------------------

# clock_order DB ROLE SCHEMA NEXT LAYOUT [WINDOW]: 1,000 ids of NEXT (an expression minting
# an id of LAYOUT with the default epoch; it may use the series' i) in one session of DB as
# ROLE, each between two reads of clock_timestamp(), every other one after a pause of 0.3
# of a tick (pg_sleep: a millisecond at least), so that many start a tick, and every fourth
# after 100 µs spent waiting, more than the window of follow_clock. SCHEMA holds an
# install of the edition, whose snowflake_sql_read_layout reads LAYOUT. Prints
# "ids|first|at clock|counted on|inside|following": the ids; those that are their slot's first of a tick; those of them whose
# pair (the time and sequence fields side by side) is the clock's, floor(ticks since the
# epoch * 2^sequence bits), at an instant between the two reads, to the clock's
# microsecond (a read truncates the time to it) and a unit of rounding; the ids later in
# their tick that are the id before them plus one in the sequence; the ids later in their
# tick that are past that, at the clock; and the ids that follow the clock to within
# WINDOW µs (0 by default): the greater of the id before plus one and the clock's pair, or
# the id before plus one at most WINDOW behind the clock (the rule of follow_clock, whose
# window the edition's snowflake_sql_follow_window_us() gives, and of the native, which has
# none).
clock_order() {
  q "$main" "$1" "$2" "SELECT $4 FROM (SELECT 0 AS i) i; SELECT pg_sleep(0.01);
    CREATE FUNCTION pg_temp.spin(us float8) RETURNS text LANGUAGE plpgsql AS \$\$
      DECLARE done timestamptz := clock_timestamp() + us * interval '1 microsecond';
      BEGIN WHILE clock_timestamp() < done LOOP END LOOP; RETURN ''; END \$\$;
    CREATE TEMP TABLE o AS
      SELECT i, clock_timestamp() AS before, $4 AS id, clock_timestamp() AS after,
             CASE WHEN i % 2 = 0 THEN pg_sleep(0.0003 * (s.layout).unit_ms)::text
                  WHEN i % 4 = 1 THEN pg_temp.spin(100) ELSE '' END AS pause
        FROM (SELECT $3.snowflake_sql_read_layout('$5') AS layout) s, generate_series(1, 1000) i;
    WITH l AS (SELECT ($3.snowflake_sql_read_layout('$5')).*),
      p AS (SELECT i, id >> l.sequence_shift AS pair, l.sequence_bits AS bits,
                   floor((extract(epoch FROM before) * 1000000 - 1577836800000000)
                         * 2::numeric ^ l.sequence_bits / (1000 * l.unit_ms)) AS first_unit,
                   floor((extract(epoch FROM after) * 1000000 + 1 - 1577836800000000)
                         * 2::numeric ^ l.sequence_bits / (1000 * l.unit_ms)) AS last_unit,
                   floor(2::numeric ^ l.sequence_bits * ${6:-0} / (1000 * l.unit_ms)) AS window_units
              FROM o, l),
      f AS (SELECT *, lag(pair) OVER (ORDER BY i) AS prev FROM p)
    SELECT count(*), count(*) FILTER (WHERE prev >> bits < pair >> bits),
           count(*) FILTER (WHERE prev >> bits < pair >> bits AND pair BETWEEN first_unit - 1 AND last_unit + 1),
           count(*) FILTER (WHERE prev >> bits = pair >> bits AND pair = prev + 1),
           count(*) FILTER (WHERE prev >> bits = pair >> bits AND pair > prev + 1 AND pair BETWEEN first_unit - 1 AND last_unit + 1),
           count(*) FILTER (WHERE pair BETWEEN greatest(prev + 1, first_unit - 1) AND greatest(prev + 1, last_unit + 1)
                               OR pair = prev + 1 AND pair >= first_unit - 1 - window_units)
      FROM f" | tail -1
}
# expect_clock_order LABEL RESULT: RESULT of clock_order, of the SQL edition with
# follow_clock off: every slot's first id of a tick at the clock, at least 150 of them, and
# every later id of the tick the one before it plus one (docs/managed.md, "The order of
# ids").
expect_clock_order() {
  local ids first at_clock counted_on
  IFS='|' read -r ids first at_clock counted_on _ <<<"$2"
  ((ids == 1000 && first >= 150 && at_clock == first && counted_on == ids - first - 1)) ||
    fail "$1: $2 (ids|first of a tick|those at the clock|later ones counted on|...)"
  ok "$1: each of the $first ids that start a tick for their slot has the clock's pair (tick and fraction, to the microsecond), the $counted_on others count on from it"
}
# expect_follow_clock LABEL RESULT: RESULT of clock_order, of ids that follow the clock
# inside the tick (the SQL edition's with follow_clock, or the native's): every id
# following the clock (clock_order), and at least 150 of those later in their tick past the
# one before plus one, at the clock.
expect_follow_clock() {
  local ids inside followed
  IFS='|' read -r ids _ _ _ inside followed <<<"$2"
  ((ids == 1000 && inside >= 150 && followed == ids)) ||
    fail "$1: $2 (ids|first of a tick|those at the clock|later ones counted on|later ones at the clock|following)"
  ok "$1: each of the $ids ids follows the clock, $inside of them inside their tick at the clock"
}
# follow_clock's window, in µs, which every install of this build has.
window=$(q "$main" conform app 'SELECT sqled.snowflake_sql_follow_window_us()')
expect_follow_clock "the default layout's ids" "$(clock_order conform app sqled 'sqled.snowflake_next()' default "$window")"
# Another unit and width, and a gene below the node and slot; node 1 (node 0 is conform's).
for layout in "js53" "time:41, sequence:8, node:2, slot:8, gene:4"; do
  db order1
  install_psql "$main" order1
  q "$main" order1 master "SELECT snowflake.snowflake_configure(node_id => 1, layout => '$layout')" >/dev/null
  minting='snowflake.snowflake_next()'
  [[ $layout == *gene* ]] && minting='snowflake.snowflake_next(i)'
  expect_follow_clock "layout '$layout'" "$(clock_order order1 app snowflake "$minting" "$layout" "$window")"
  sql "$main" "DROP DATABASE order1 WITH (FORCE)"
done
# follow_clock: on by default where the layout allows it, off on a layout that does not;
# the owner's to turn off and on at any time, ids minted or not; refused on a layout whose
# sequence is not right below the time.
db order1
install_psql "$main" order1
defaults=$(q "$main" order1 master "SELECT (snowflake.snowflake_configure(node_id => 1, layout => 'worker-first')).follow_clock;
  SELECT (snowflake.snowflake_configure(layout => 'default')).follow_clock" | paste -sd' ')
[[ $defaults == 'f t' ]] || fail "follow_clock by layout: $defaults (worker-first, then the default layout)"
ok "follow_clock by default: off under layout 'worker-first', on under the default layout"
q "$main" order1 master "SELECT snowflake.snowflake_next(); SELECT snowflake.snowflake_configure(follow_clock => false)" >/dev/null
expect_clock_order "the default layout's ids with follow_clock turned off after ids were minted" \
  "$(clock_order order1 app snowflake 'snowflake.snowflake_next()' default)"
expect_error "$main" order1 master 22023 "ids of layout 'time:41, node:2, slot:8, sequence:12' cannot follow the clock inside a tick" \
  "SELECT snowflake.snowflake_configure(layout => 'worker-first', follow_clock => true)"
q "$main" order1 master "SELECT snowflake.snowflake_configure(follow_clock => true)" >/dev/null
expect_follow_clock "the same database with follow_clock on again" \
  "$(clock_order order1 app snowflake 'snowflake.snowflake_next()' default "$window")"
sql "$main" "DROP DATABASE order1 WITH (FORCE)"
if $have_native; then
  # The same measures of the native's ids: the rules the edition follows are the native's.
  native_order=$(clock_order conform postgres sqled 'public.snowflake_next()' default)
  IFS='|' read -r _ first at_clock _ <<<"$native_order"
  ((first >= 150 && at_clock == first)) || fail "the native's first ids of a tick: $at_clock of $first at the clock"
  ok "the native's ids, measured alike: each of the $first that start a tick for their backend has the clock's pair"
  expect_follow_clock "the native's ids" "$native_order"
fi

# --- Order, ROLLBACK, read-only transactions, pooler resets ------------------------------

q "$main" conform postgres "CREATE TABLE minted (id bigint PRIMARY KEY DEFAULT sqled.snowflake_next(),
    n bigserial, pid int NOT NULL DEFAULT pg_backend_pid(), xact xid8 NOT NULL DEFAULT pg_current_xact_id());
  GRANT INSERT, SELECT ON minted TO app; GRANT USAGE ON SEQUENCE minted_n_seq TO app;
  SET enable_seqscan = off;
  EXPLAIN (COSTS OFF) SELECT * FROM minted WHERE id >= sqled.snowflake_floor(now() - interval '1 hour') AND id < sqled.snowflake_floor(now())" |
  grep -q 'Index Cond' || fail "a floor range is no primary-key index condition"
ok "id >= snowflake_floor(a) AND id < snowflake_floor(b) is a primary-key index condition"

rising=$(cluster_psql "$main" -qAt -d conform -U app <<'SQL'
SET search_path = sqled;
BEGIN; SELECT snowflake_next() AS a \gset
ROLLBACK;
SELECT snowflake_next() > :a AS after_rollback;
BEGIN; SELECT snowflake_next() AS b \gset
SAVEPOINT s; SELECT snowflake_next() AS c \gset
ROLLBACK TO s; SELECT snowflake_next() > :c AS after_savepoint; COMMIT;
SELECT (snowflake_parse(snowflake_next())).backend_slot AS slot \gset
RESET ALL;
SET search_path = sqled;
SELECT (snowflake_parse(snowflake_next())).backend_slot = :slot AS same_slot_after_reset,
       (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS locks;
SELECT snowflake_next() AS d \gset
DISCARD ALL;
SELECT (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS locks_after_discard,
       sqled.snowflake_next() > :d AS after_discard;
SQL
) || fail "the session checks: $rising"
[[ $rising == $'t\nt\nt|1\n0|t' ]] || fail "ids across ROLLBACK, a savepoint, RESET ALL and DISCARD ALL: $rising"
ok "a session's ids rise across ROLLBACK, ROLLBACK TO SAVEPOINT, RESET ALL (same slot, no lock leaked) and DISCARD ALL (slot given back)"

# The error, with its hint, however the transaction is made read-only; a session that holds
# a slot already gets nextval's, with the same SQLSTATE (the hot path reads no setting it
# does not need: docs/managed.md, "Speed").
read_only='cannot mint snowflake ids in a read-only transaction.*HINT:  Mint in a read-write transaction'
expect_error "$main" conform app 25006 "$read_only" "BEGIN READ ONLY; SELECT sqled.snowflake_next()"
expect_error "$main" conform app 25006 'cannot execute nextval\(\) in a read-only transaction' \
  "SELECT sqled.snowflake_next(); BEGIN; SET TRANSACTION READ ONLY; SELECT sqled.snowflake_next()"
PGOPTIONS='-c default_transaction_read_only=on' expect_error "$main" conform app 25006 "$read_only" \
  "SELECT sqled.snowflake_next()"
[[ $(q "$main" conform app "BEGIN READ ONLY; SELECT sqled.snowflake_floor(now()) > 0, (sqled.snowflake_parse(1024)).sequence; COMMIT") == "t|1" ]] ||
  fail "floor and parse in a read-only transaction"
ok "a read-only transaction: floor and parse work, snowflake_next() refuses with 25006"

# One statement's ids rise in row order; each session's across its statements.
cat >"$CLUSTERS_DIR/$main/rows.sql" <<'SQL'
INSERT INTO minted (id) SELECT sqled.snowflake_next() FROM generate_series(1, 20);
SQL
pgbench_run "$main" --db conform --user app -c 16 -j 2 -T 2 -f "$CLUSTERS_DIR/$main/rows.sql" >/dev/null ||
  fail "pgbench of 16 sessions"
backwards=$(q "$main" conform postgres "SELECT count(*) FILTER (WHERE id <= prev_x) + count(*) FILTER (WHERE id <= prev_p)
  FROM (SELECT id, lag(id) OVER (PARTITION BY xact ORDER BY n) AS prev_x,
               lag(id) OVER (PARTITION BY pid ORDER BY n) AS prev_p FROM minted) s")
[[ $backwards == 0 ]] || fail "$backwards ids below their statement's or session's previous one"
rows=$(q "$main" conform postgres "SELECT count(*) FROM minted")
ok "16 sessions, $rows ids: each statement's rise in row order, each session's across its statements"

# The order of ids across sessions, as tests/concurrency.sh checks the native's: 8 sessions
# inserting one row a transaction, each id beside the clock read right after it; sorted by
# id, the share of neighbours whose clock goes back by more than 0.1 ms. At most 5%: a
# PL/pgSQL call is longer than the native's, and on two busy cores more sessions are paused
# inside it (bench/density.sh measures the share: docs/performance.md). With follow_clock
# off it is 14 to 27%, in 0.3.0's order 13%.
q "$main" conform postgres "CREATE TABLE clocked (id bigint PRIMARY KEY DEFAULT sqled.snowflake_next(),
    at timestamptz NOT NULL DEFAULT clock_timestamp()); GRANT INSERT, SELECT ON clocked TO app"
echo "INSERT INTO clocked DEFAULT VALUES;" >"$CLUSTERS_DIR/$main/clocked.sql"
pgbench_run "$main" --db conform --user app -c 8 -j 2 -t 2000 -f "$CLUSTERS_DIR/$main/clocked.sql" >/dev/null ||
  fail "pgbench of 8 sessions inserting one row a transaction"
IFS="|" read -r rows back <<<"$(ids_out_of_clock_order "$main" clocked -d conform)"
[[ $rows == 16000 ]] || fail "order: $rows rows, expected 16000"
((back * 20 <= rows)) ||
  fail "order: $back of $rows neighbours sorted by id read the clock more than 0.1 ms apart in the wrong order (at most 5%)"
ok "8 sessions, 16000 single-row transactions: sorted by id, $back neighbours read the clock more than 0.1 ms apart in the wrong order (at most 5%)"

# --- 200 sessions at once, reconnecting: slots change hands --------------------------------

q "$main" conform postgres "TRUNCATE minted"
cat >"$CLUSTERS_DIR/$main/one.sql" <<'SQL'
INSERT INTO minted (id) VALUES (sqled.snowflake_next()), (sqled.snowflake_next());
SQL
# First 200 sessions at once: each mints, then waits until one of them has seen 200 slots
# held in this database at one moment (all the sessions' own), and notes the most it saw,
# and until all 200 have minted: no session leaves before the last has counted the
# sessions holding a slot as it took its own (the status's most_backends_minting).
cat >"$CLUSTERS_DIR/$main/held.sql" <<'SQL'
INSERT INTO minted (id) VALUES (sqled.snowflake_next()), (sqled.snowflake_next());
DO $$
DECLARE
  seen int := 0;
BEGIN
  FOR i IN 1 .. 600 LOOP
    seen := greatest(seen, (SELECT count(DISTINCT objid) FROM pg_locks WHERE locktype = 'advisory'
                            AND classid = 1936617335 AND granted
                            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())));
    INSERT INTO held VALUES (seen);
    EXIT WHEN (seen >= 200 OR EXISTS (SELECT FROM held WHERE slots >= 200))
      AND (SELECT count(DISTINCT pid) FROM minted) >= 200;
    PERFORM pg_sleep(0.05);
  END LOOP;
END
$$;
SQL
q "$main" conform postgres "CREATE TABLE held (slots int); GRANT INSERT, SELECT ON held TO app"
read -r _ done_tx failed < <(pgbench_run "$main" --db conform --user app -c 200 -j 2 -t 1 -f "$CLUSTERS_DIR/$main/held.sql") ||
  fail "pgbench of 200 sessions"
((failed == 0 && done_tx == 200)) || fail "200 sessions: $failed of $done_tx transactions failed"
most_held=$(q "$main" conform postgres "SELECT max(slots) FROM held")
counts=$(q "$main" conform postgres "SELECT count(*), count(DISTINCT id), count(DISTINCT pid) FROM minted")
IFS='|' read -r rows distinct sessions <<<"$counts"
[[ $rows == "$distinct" && $sessions == 200 ]] || fail "200 sessions: $counts (ids|distinct|sessions)"
backwards=$(q "$main" conform postgres "SELECT count(*) FROM (SELECT id <= lag(id) OVER (PARTITION BY (sqled.snowflake_parse(id)).backend_slot
    ORDER BY n) AS back FROM minted) s WHERE back")
[[ $backwards == 0 ]] || fail "$backwards ids below their slot's previous one"
((most_held == 200)) || fail "200 sessions held at most $most_held slots at once"
ok "200 sessions at once, 200 slots held at one moment: $rows ids, all distinct, each slot's rising"
# The status counts the most sessions holding a slot at once, as each takes its slot.
most=$(q "$main" conform app "SELECT most_backends_minting FROM sqled.snowflake_status")
((most >= 200 && most <= 215)) || fail "most_backends_minting $most after 200 sessions held their slots at once (215 connections)"
ok "most_backends_minting $most after 200 sessions held a slot at once"
q "$main" conform postgres "TRUNCATE minted"
read -r _ done_tx failed < <(pgbench_run "$main" --db conform --user app -c 200 -j 2 -C -T 4 -f "$CLUSTERS_DIR/$main/one.sql") ||
  fail "pgbench of 200 sessions reconnecting"
((failed == 0 && done_tx > 0)) || fail "200 reconnecting sessions: $failed of $done_tx transactions failed"
counts=$(q "$main" conform postgres "SELECT count(*), count(DISTINCT id), count(DISTINCT pid),
    count(DISTINCT (sqled.snowflake_parse(id)).backend_slot) FROM minted")
IFS='|' read -r rows distinct sessions slots <<<"$counts"
[[ $rows == "$distinct" ]] || fail "$rows ids, $distinct distinct"
backwards=$(q "$main" conform postgres "SELECT count(*) FROM (SELECT id <= lag(id) OVER (PARTITION BY (sqled.snowflake_parse(id)).backend_slot
    ORDER BY n) AS back FROM minted) s WHERE back")
[[ $backwards == 0 ]] || fail "$backwards ids below the last id of their slot's previous holder"
ok "200 clients reconnecting (-C): $rows ids from $sessions sessions over $slots slots, all distinct, each slot's rising across holders"

# --- Poolers: pgbouncer in transaction and session pooling ---------------------------------

if command -v pgbouncer >/dev/null; then
  hostport="host=$CLUSTERS_DIR/$main port=$base dbname=conform user=postgres"
  pgbouncer_start "$bouncer" $((base + 4)) "tx = $hostport pool_mode=transaction" "sess = $hostport pool_mode=session" ||
    fail "pgbouncer did not start"
  q "$main" conform postgres "TRUNCATE minted"
  for mode in tx sess; do
    pgbench_run "$main" --db "$mode" --via "$CLUSTERS_DIR/$bouncer" $((base + 4)) -c 30 -j 2 -T 2 -C \
      -f "$CLUSTERS_DIR/$main/rows.sql" >/dev/null || fail "pgbench through pgbouncer ($mode)"
  done
  pgbouncer_stop "$bouncer"
  counts=$(q "$main" conform postgres "SELECT count(*), count(DISTINCT id) FROM minted")
  [[ ${counts%|*} == "${counts#*|}" && ${counts%|*} -gt 0 ]] || fail "through pgbouncer: $counts (ids|distinct)"
  ok "pgbouncer, transaction and session pooling (DISCARD ALL between clients), 30 clients reconnecting: ${counts%|*} ids, all distinct"
else
  skip "pgbouncer is not installed"
fi

# --- Settings a plain role cannot change; no minting as another slot or node ---------------

expect_error "$main" conform app 42501 'permission denied for function snowflake_configure' \
  "SELECT sqled.snowflake_configure(node_id => 1)"
expect_error "$main" conform app 42501 'permission denied for table snowflake_settings' \
  "UPDATE sqled.snowflake_settings SET node_id = 1"
expect_error "$main" conform app 42501 'permission denied for sequence snowflake_slot_3' \
  "SELECT setval('sqled.snowflake_slot_3', 1)"
expect_error "$main" conform app 42501 'permission denied for sequence snowflake_slot_3' \
  "SELECT nextval('sqled.snowflake_slot_3')"
expect_error "$main" conform app 42501 'permission denied for function snowflake_sql_take_slot' \
  "SELECT sqled.snowflake_sql_take_slot('x')"
expect_error "$main" conform app 42501 'permission denied for function snowflake_sql_next_made' \
  "SELECT sqled.snowflake_sql_next_made()"
expect_error "$main" conform app 42501 'permission denied for function snowflake_sql_compile' \
  "SELECT sqled.snowflake_sql_compile(sqled.snowflake_sql_settings())"
expect_error "$main" conform app 42501 'permission denied for function snowflake_sql_reorder' \
  "SELECT sqled.snowflake_sql_reorder(sqled.snowflake_sql_settings())"
expect_error "$main" conform app 42501 'permission denied for table snowflake_life' \
  "DELETE FROM sqled.snowflake_life"
# Another session holds a slot; a plain role that names it in the cache mints elsewhere.
(q "$main" conform app "SELECT sqled.snowflake_next(); SELECT pg_sleep(3)" >/dev/null 2>&1 &)
for _ in $(seq 50); do
  held_slot=$(q "$main" conform postgres "SELECT min(objid) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1936617335
    AND pid <> pg_backend_pid()")
  [[ -n $held_slot ]] && break
  sleep 0.1
done
[[ -n $held_slot ]] || fail "the background session took no slot"
got=$(q "$main" conform app "SET snowflake_sql.slot = '$held_slot'; SET client_min_messages = error;
  SELECT (sqled.snowflake_parse(sqled.snowflake_next())).backend_slot, (sqled.snowflake_parse(sqled.snowflake_next())).node_id")
[[ ${got%|*} != "$held_slot" && ${got#*|} == 0 ]] || fail "a plain role naming slot $held_slot minted on slot/node $got"
# The cache SET by hand to what names no slot is refused, and a RESET mends it.
expect_error "$main" conform app 22023 'snowflake_sql.slot is "9999", which names no slot of this database.*HINT:  .*RESET snowflake_sql.slot' \
  "SET snowflake_sql.slot = '9999'; SELECT sqled.snowflake_next()"
expect_error "$main" conform app 22P02 'invalid input syntax for type integer: "seven"' \
  "SET snowflake_sql.slot = 'seven'; SELECT sqled.snowflake_next()"
got=$(sql "$main" "SET snowflake_sql.slot = '-3'" -d conform -U app -v ON_ERROR_STOP=0 \
  -c "SELECT sqled.snowflake_next()" -c "RESET snowflake_sql.slot" -c "SELECT sqled.snowflake_next() > 0" 2>&1)
[[ $got == *'"-3", which names no slot'* && $got == *$'\nt' ]] ||
  fail "a negative slot number in the cache: not refused, or the session minted nothing after RESET: $got"
ok "a plain role cannot configure, write the settings, move a slot's sequence, call the internals, nor mint on another's slot"
# snowflake_next() runs as the installing role without a SET search_path (its cost: see
# sql_edition/src/60_next.sql): a caller's schema placed before pg_catalog, with look-alikes
# of functions, operators and types it uses, changes nothing.
sql "$main" "CREATE SCHEMA evil AUTHORIZATION app" -d conform
# The schema is open to every role, as a hostile caller would leave it: snowflake_next()
# runs as the installing role, whose lookups skip schemas it may not use.
hostile=$(q "$main" conform app "SET search_path = evil, pg_catalog;
  GRANT USAGE ON SCHEMA evil TO PUBLIC;
  CREATE FUNCTION evil.nextval(regclass) RETURNS bigint LANGUAGE sql RETURN 0;
  CREATE FUNCTION evil.current_setting(text, boolean) RETURNS text LANGUAGE sql RETURN '7';
  CREATE FUNCTION evil.current_setting(text) RETURNS text LANGUAGE sql RETURN 'off';
  CREATE FUNCTION evil.pg_try_advisory_lock(int, int) RETURNS boolean LANGUAGE sql RETURN true;
  CREATE FUNCTION evil.date_part(text, timestamptz) RETURNS float8 LANGUAGE sql RETURN 0;
  CREATE DOMAIN evil.float8 AS pg_catalog.float8 CHECK (false);
  CREATE FUNCTION evil.or8(bigint, bigint) RETURNS bigint LANGUAGE sql RETURN 0;
  CREATE OPERATOR evil.| (FUNCTION = evil.or8, LEFTARG = bigint, RIGHTARG = bigint);
  CREATE DOMAIN evil.text AS pg_catalog.text CHECK (false);
  SELECT count(DISTINCT id), bool_and((sqled.snowflake_parse(id)).node_id = 0),
         bool_and((sqled.snowflake_parse(id)).ts > now() - interval '1 minute')
    FROM (SELECT sqled.snowflake_next() AS id FROM generate_series(1, 1000)) s" 2>&1) || true
[[ $hostile == "1000|t|t" ]] || fail "a caller's look-alike functions, operators and types reached snowflake_next(): $hostile"
sql "$main" "DROP SCHEMA evil CASCADE" -d conform
ok "a caller's search_path with look-alikes of pg_catalog's functions, operators and types before pg_catalog: ids as ever"

# --- Node claims: two databases of one server, two servers -------------------------------

db ticks
install_psql "$main" ticks
expect_error "$main" ticks app 55000 'node id 0 is claimed by database "conform" of this server' \
  "SELECT snowflake.snowflake_next()"
expect_error "$main" ticks master 55000 'node id 0 is claimed by database "conform" of this server' \
  "SELECT snowflake.snowflake_configure(node_id => 0)"
# A claim of another server (as logical replication of the claims would bring it).
q "$main" ticks master "INSERT INTO snowflake.snowflake_nodes VALUES (2, 42, 'elsewhere', 'time:41, node:2, slot:8, sequence:12',
  '2020-01-01', now(), 'ticks')"
expect_error "$main" ticks master 55000 'node id 2 is claimed by another server' \
  "SELECT snowflake.snowflake_configure(node_id => 2)"
q "$main" ticks master "SELECT snowflake.snowflake_release_node(2)" >/dev/null
q "$main" ticks master "INSERT INTO snowflake.snowflake_nodes VALUES (3, 42, 'elsewhere', 'js53', '2020-01-01', now(), 'x')"
expect_error "$main" ticks master 55000 "this server's layout or epoch differs from that of node 3" \
  "SELECT snowflake.snowflake_configure(node_id => 1)"
q "$main" ticks master "SELECT snowflake.snowflake_release_node(3)" >/dev/null
# The node id, a one-slot layout with 4 ids per ms (the gene takes the rest), no lead; the
# sequence starts each ms at the clock's quarter of it.
q "$main" ticks master "SELECT snowflake.snowflake_configure(node_id => 1, layout => 'time:41, sequence:2, node:2, slot:0, gene:18',
  max_lead_ms => 0)" >/dev/null
[[ $(q "$main" ticks app "SELECT (snowflake.snowflake_parse(snowflake.snowflake_next())).node_id, node_claimed FROM snowflake.snowflake_status") == "1|t" ]] ||
  fail "database ticks does not mint as node 1"
expect_error "$main" ticks master 55000 'ids have been minted under layout' \
  "SELECT snowflake.snowflake_configure(layout => 'default')"
ok "node ids: refused when another database of the server or another server claims them, or a server of the claims mints another layout; layout fixed once minted"

# --- A spent tick waits; a slot handed over in the same ms --------------------------------

spent=$(q "$main" ticks app "CREATE TEMP TABLE t AS SELECT snowflake.snowflake_next() AS id, clock_timestamp() AS c
    FROM generate_series(1, 400);
  SELECT count(DISTINCT id), count(DISTINCT (snowflake.snowflake_parse(id)).ts),
         bool_and((snowflake.snowflake_parse(id)).ts <= c), max(c) - min(c) >= interval '95 ms' FROM t")
IFS='|' read -r distinct ms_used never_ahead waited <<<"$spent"
[[ $distinct == 400 && $ms_used -ge 100 && $never_ahead == t && $waited == t ]] ||
  fail "400 ids at 4 per ms and no lead: $spent (distinct|ms|never ahead|waited)"
ok "a spent tick waits for the next: 400 ids at 4 per ms over $ms_used ms, none ahead of the clock"
# The status counts each wait (55_counters.sql): about one every 4 ids above, and the
# waits of a transaction that rolls back stay counted.
waits=$(q "$main" ticks app "SELECT spent_tick_waits FROM snowflake.snowflake_status")
rolled=$(q "$main" ticks app "BEGIN; SELECT count(DISTINCT snowflake.snowflake_next()) FROM generate_series(1, 200); ROLLBACK;
  SELECT spent_tick_waits FROM snowflake.snowflake_status")
rolled=${rolled##*$'\n'}
((waits >= 50 && waits <= 400 && rolled - waits >= 20 && rolled - waits <= 200)) ||
  fail "spent_tick_waits $waits after 400 ids at 4 per ms, $rolled after 200 more in a transaction rolled back"
ok "spent_tick_waits: $waits after 400 ids at 4 per ms, $((rolled - waits)) more from 200 ids of a transaction rolled back"
# With a lead of 1 s, a burst runs ahead of the clock; the next session on the one slot goes
# on from the burst's last pair, in the same ms, without waiting the lead out.
q "$main" ticks master "SELECT snowflake.snowflake_configure(max_lead_ms => 1000)" >/dev/null
# Each row keeps the clock of its minting: on a loaded machine the next holder may start
# only once the clock has passed the burst, and then it mints on the clock's own tick.
q "$main" ticks master "CREATE TABLE burst (id bigint PRIMARY KEY, holder int, c timestamptz DEFAULT clock_timestamp());
  GRANT INSERT, SELECT ON burst TO app"
q "$main" ticks app "INSERT INTO burst SELECT snowflake.snowflake_next(), 1 FROM generate_series(1, 2000)"
q "$main" ticks app "INSERT INTO burst SELECT snowflake.snowflake_next(), 2 FROM generate_series(1, 10)"
handover=$(q "$main" ticks postgres "WITH b AS (SELECT max(id) AS last, (snowflake.snowflake_parse(max(id))).ts AS last_ts, max(c) AS done
                  FROM burst WHERE holder = 1),
    n AS (SELECT min(id) AS first, (snowflake.snowflake_parse(min(id))).ts AS first_ts, min(c) AS began FROM burst WHERE holder = 2)
  SELECT first > last, last_ts > done,
         first_ts - last_ts <= interval '1 ms' OR began >= last_ts FROM b, n")
[[ $handover == "t|t|t" ]] || fail "the slot's next holder after a burst: $handover (above|burst ahead of clock|same or next ms)"
ok "a slot handed over after a burst 500 ms ahead of the clock: the next holder goes on above it, in the same or next ms (or on the clock, once past it)"
# The burst's lead is the furthest, at least how far an id of it lay ahead of the clock
# read after its call, and within the lead bound; neither the burst nor the next holder's
# start from its last pair is a clock step back.
counted=$(q "$main" ticks app "SELECT furthest_lead_ms, clock_steps_absorbed, clock_steps_refused,
    (SELECT floor(extract(epoch FROM max((snowflake.snowflake_parse(id)).ts - c)) * 1000) FROM burst)
  FROM snowflake.snowflake_status")
IFS='|' read -r furthest absorbed refused seen <<<"$counted"
((furthest >= seen && seen > 0 && furthest <= 1000 && absorbed == 0 && refused == 0)) ||
  fail "after the burst: $counted (furthest_lead_ms|clock_steps_absorbed|clock_steps_refused|lead seen)"
ok "furthest_lead_ms $furthest after the burst ($seen ms seen), no clock step counted"
sql "$main" "DROP DATABASE ticks WITH (FORCE)"

# --- The end of the epoch: the native's warning, once a day in a session ------------------

# 37 bits of ms from 2026-01-01 end in 2030-05 (as tests/operations.sh's native server):
# fewer than five years left. A read of the status warns, and a session that mints, each
# once (one more for a midnight UTC crossed).
db ending
install_psql "$main" ending
q "$main" ending master "SELECT snowflake.snowflake_configure(node_id => 2, layout => 'time:37, node:2, slot:8, sequence:16',
  epoch => '2026-01-01')" >/dev/null
ending_warning='WARNING:  01000: snowflake_sql: the time field of the layout runs out at 2030-05-10 17:29:13\.472\+00, in [0-9]+ days: no id can be minted after it'
# today: the day since 1970, UTC, as the warning counts days.
today() { local now; now=$(date -u +%s) && echo $((now / 86400)); }
# warned_once LABEL DAY OUTPUT: OUTPUT (verbose) of a session begun on DAY holds the
# warning, with its detail and hint, once (one more for each midnight UTC since).
warned_once() {
  local count
  count=$(grep -cE "$ending_warning" <<<"$3") || true
  ((count == 1 + $(today) - $2)) || fail "$1: $count warnings that the epoch ends: $3"
  if ! grep -qF 'DETAIL:  The layout time:37, node:2, slot:8, sequence:16 counts its time from the epoch 2026-01-01 00:00:00+00.' <<<"$3" ||
    ! grep -qF 'HINT:  Plan the move before then' <<<"$3" ||
    ! grep -qF 'see the chapter "The end of the epoch" of docs/operations.md' <<<"$3"; then
    fail "$1: the warning's detail or hint: $3"
  fi
}
day=$(today)
warned_once "two reads of the status" "$day" "$(sql "$main" "SELECT epoch_ends FROM snowflake.snowflake_status" -d ending -U app \
  -c "SELECT epoch_ends FROM snowflake.snowflake_status" -v VERBOSITY=verbose 2>&1)"
day=$(today)
warned_once "a session minting over several ticks, then reading the status" "$day" "$(cluster_psql "$main" -qAt -d ending -U app \
  -v VERBOSITY=verbose 2>&1 <<'SQL'
SELECT snowflake.snowflake_next() > 0;
SELECT pg_sleep(0.01);
SELECT count(DISTINCT snowflake.snowflake_next()) FROM generate_series(1, 3000);
SELECT pg_sleep(0.01);
SELECT snowflake.snowflake_next() > 0, epoch_ends FROM snowflake.snowflake_status;
SQL
)"
sql "$main" "DROP DATABASE ending WITH (FORCE)"
ok "a layout that ends in 2030: the native's warning once in a session that reads the status twice, once in one that mints over many ticks"

# --- Databases of one server sharing a node id, each under a range of its slots ----------

# Three databases share node 1 (docs/managed.md, "Databases of one server"); their
# installs warn that node 0 is database conform's.
shared=(share1 share2 share3)
ranges=(0-99 100-199 200-255)
for i in 0 1 2; do
  db "${shared[i]}"
  install_psql "$main" "${shared[i]}"
  q "$main" "${shared[i]}" master "SELECT snowflake.snowflake_configure(node_id => 1, slots => '${ranges[i]}');
    CREATE TABLE ids (id bigint PRIMARY KEY); GRANT INSERT, SELECT ON ids TO app" >/dev/null
done
statuses=$(for d in "${shared[@]}"; do
  q "$main" "$d" app "SELECT node_id, slots, node_claimed, node_claimed_by_other FROM snowflake.snowflake_status"; done)
[[ $statuses == $'1|100|t|f\n1|100|t|f\n1|56|t|f' ]] || fail "the status of the databases sharing node 1: $statuses"
expect_error "$main" share3 master 55000 'slots 100-199 of node id 1 are claimed by database "share2" of this server.*DETAIL:  This database asks for slots 150-255 of it.*HINT:  Give this database slots of node id 1 that no other database holds.*DROP ROLE snowflake_sql_node_1_slots_100_199 frees its claim' \
  "SELECT snowflake.snowflake_configure(slots => '150-255')"
expect_error "$main" share3 master 22023 'slots 200-256 do not fit in the 256 slots of the layout.*DETAIL:  With 8 slot bits, slots go from 0 to 255' \
  "SELECT snowflake.snowflake_configure(slots => '200-256')"
expect_error "$main" share3 master 22023 'invalid value for slots: "255-200"' "SELECT snowflake.snowflake_configure(slots => '255-200')"
# A slot outside the database's range has no sequence in its code.
expect_error "$main" share2 app 22023 'snowflake_sql.slot is "5", which names no slot of this database' \
  "SET snowflake_sql.slot = '5'; SELECT snowflake.snowflake_next()"
ok "three databases share node 1 under slots 0-99, 100-199 and 200-255 (status: 100, 100, 56 slots); overlapping slots, slots past the layout's and a slot outside the range refused"

# The three mint at once, 8 sessions each, reconnecting (so sessions spread over slots).
cat >"$CLUSTERS_DIR/$main/shared.sql" <<'SQL'
INSERT INTO ids SELECT snowflake.snowflake_next() FROM generate_series(1, 20);
SQL
pids=()
for d in "${shared[@]}"; do
  pgbench_run "$main" --db "$d" --user app -c 8 -j 2 -C -T 2 -f "$CLUSTERS_DIR/$main/shared.sql" >/dev/null &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "pgbench in a database sharing node 1"; done
q "$main" share1 postgres "CREATE TABLE every (db text, id bigint)"
for d in "${shared[@]}"; do
  cluster_psql "$main" -qAt -d "$d" -U postgres -c "COPY (SELECT '$d', id FROM ids) TO STDOUT" |
    cluster_psql "$main" -q -d share1 -U postgres -c "COPY every FROM STDIN" || fail "gathering the ids of $d"
done
# Per database: ids, slots used, and ids whose node is not 1 or whose slot lies outside the
# database's range; then all ids and the distinct ones.
minted=$(q "$main" share1 postgres "SELECT string_agg(format('%s:%s:%s:%s', db, n, slots, wrong), ' ' ORDER BY db)
    FROM (SELECT db, count(*) AS n, count(DISTINCT (snowflake.snowflake_parse(id)).backend_slot) AS slots,
                 count(*) FILTER (WHERE (snowflake.snowflake_parse(id)).node_id <> 1
                                     OR (snowflake.snowflake_parse(id)).backend_slot NOT BETWEEN
                                        CASE db WHEN 'share1' THEN 0 WHEN 'share2' THEN 100 ELSE 200 END AND
                                        CASE db WHEN 'share1' THEN 99 WHEN 'share2' THEN 199 ELSE 255 END) AS wrong
            FROM every GROUP BY db) d;
  SELECT count(*), count(DISTINCT id) FROM every")
per_db=$(sed -n 1p <<<"$minted")
IFS='|' read -r total distinct <<<"$(sed -n 2p <<<"$minted")"
[[ $total == "$distinct" && $total -gt 0 ]] || fail "ids of the databases sharing node 1: $total, $distinct distinct"
for entry in $per_db; do
  IFS=: read -r d n slots wrong <<<"$entry"
  ((n > 0 && slots > 1 && wrong == 0)) || fail "$d minted $n ids over $slots slots, $wrong of another node or outside its range"
done
ok "three databases sharing node 1 minting at once, 8 reconnecting sessions each: $total ids, all distinct, each database's under node 1 and its own slots ($per_db)"

# Two databases claiming overlapping slots of node 2 at the same moment: one wins, and the
# other, which waited for the first's claim to end, is refused with its name.
db race1
db race2
for d in race1 race2; do install_psql "$main" "$d"; done
at=$(q "$main" conform postgres "SELECT extract(epoch FROM clock_timestamp() + interval '1 s')")
pids=()
for i in 1 2; do
  q "$main" "race$i" master "SELECT pg_sleep_until(to_timestamp($at));
    SELECT snowflake.snowflake_configure(node_id => 2, slots => '$(((i - 1) * 64))-$(((i - 1) * 64 + 127))') IS NOT NULL;
    SELECT pg_sleep(0.5)" >"$CLUSTERS_DIR/$main/race$i.out" 2>&1 &
  pids[i]=$!
done
won=() lost=()
for i in 1 2; do
  if wait "${pids[i]}"; then won+=("race$i"); else lost+=("race$i"); fi
done
((${#won[@]} == 1)) || fail "two databases claiming slots 0-127 and 64-191 of node 2 at once: ${#won[@]} won"
grep -qE "ERROR:  slots (0-127|64-191) of node id 2 are claimed by database \"${won[0]}\" of this server" "$CLUSTERS_DIR/$main/${lost[0]}.out" ||
  fail "the claim that lost: $(cat "$CLUSTERS_DIR/$main/${lost[0]}.out")"
# The same, with the first claim's transaction held open 2 s: the second waits it out.
q "$main" "${lost[0]}" master "SELECT snowflake.snowflake_configure(node_id => 3, slots => '0-9')" >/dev/null
q "$main" "${won[0]}" master "BEGIN; SELECT snowflake.snowflake_configure(node_id => 3, slots => '10-19'); SELECT pg_sleep(2); COMMIT" >/dev/null &
holder=$!
sleep 0.5
claim_began=${EPOCHREALTIME/./}
expect_error "$main" "${lost[0]}" master 55000 "slots 10-19 of node id 3 are claimed by database \"${won[0]}\" of this server" \
  "SELECT snowflake.snowflake_configure(slots => '5-14')"
waited=$(((${EPOCHREALTIME/./} - claim_began) / 1000))
wait "$holder" || fail "the claim held open in ${won[0]}"
((waited >= 1000)) || fail "the claim in ${lost[0]} did not wait for the one in progress in ${won[0]} (${waited} ms)"
ok "two databases claiming overlapping slots of one node id at the same moment: ${won[0]} won, ${lost[0]} refused; a claim waits for one in progress ($waited ms) and sees it"

# A database gives slots up only while no session holds one of them.
(q "$main" share1 app "SELECT snowflake.snowflake_next(); SELECT pg_sleep(3)" >/dev/null 2>&1 &)
held_slot=
for _ in $(seq 50); do
  held_slot=$(q "$main" share1 postgres "SELECT min(objid) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1936617335
    AND pid <> pg_backend_pid() AND database = (SELECT oid FROM pg_database WHERE datname = 'share1')")
  [[ -n $held_slot ]] && break
  sleep 0.1
done
[[ -n $held_slot ]] || fail "the background session of share1 took no slot"
narrower=$((held_slot > 0 ? 0 : 1))-$((held_slot > 0 ? held_slot - 1 : 99))
expect_error "$main" share1 master 55006 "sessions of database \"share1\" hold slots that it would give up.*DETAIL:  Slots held until their sessions end: $held_slot \\(process [0-9]+\\)" \
  "SELECT snowflake.snowflake_configure(slots => '$narrower')"
for _ in $(seq 50); do
  [[ $(q "$main" share1 postgres "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1936617335") == 0 ]] && break
  sleep 0.1
done
[[ $(q "$main" share1 master "SELECT (snowflake.snowflake_configure(slots => '$narrower')).last_slot IS NOT NULL;
  SELECT slots FROM snowflake.snowflake_status") == $'t\n'$((${narrower#*-} - ${narrower%-*} + 1)) ]] ||
  fail "share1 narrowed to $narrower once its session ended"
ok "slots a session holds are not given up (55006, naming slot $held_slot), and are once it ended (share1 narrowed to $narrower)"

# The claim of a dropped database is stale: a claim of slots overlapping it takes it over.
sql "$main" "DROP DATABASE share3 WITH (FORCE)"
q "$main" "${lost[0]}" master "SELECT snowflake.snowflake_configure(node_id => 1, slots => '210-255')" >/dev/null
# In the order of their first slots (share1's range starts at 1 when its session held slot 0).
claims=$(q "$main" conform postgres "SELECT string_agg(rolname || ' ' || split_part(shobj_description(oid, 'pg_authid'), 'its name: ', 2), ', '
    ORDER BY (regexp_match(rolname, '_slots_([0-9]+)_'))[1]::integer)
  FROM pg_roles WHERE rolname LIKE 'snowflake\_sql\_node\_1\_%'")
[[ $claims == "snowflake_sql_node_1_slots_${narrower%-*}_${narrower#*-} share1, snowflake_sql_node_1_slots_100_199 share2, snowflake_sql_node_1_slots_210_255 ${lost[0]}" ]] ||
  fail "node 1's claims after share3 was dropped and ${lost[0]} claimed slots 210-255: $claims"
[[ $(q "$main" "${lost[0]}" app "SELECT (snowflake.snowflake_parse(snowflake.snowflake_next())).node_id, node_claimed FROM snowflake.snowflake_status") == "1|t" ]] ||
  fail "${lost[0]} does not mint under node 1"
ok "a stale claim of slots 200-255 (database share3, dropped) taken over by ${lost[0]}'s claim of slots 210-255"
# Slots given up while a burst's last id on one of them lies ahead of the clock: the change
# returns once the clock has passed it, so that a database claiming the slot next mints above.
q "$main" "${won[0]}" master "SELECT snowflake.snowflake_configure(layout => 'time:41, node:2, slot:8, sequence:2, gene:10',
  max_lead_ms => 1000); CREATE TABLE burst (id bigint); GRANT INSERT ON burst TO app" >/dev/null
q "$main" "${won[0]}" app "INSERT INTO burst SELECT snowflake.snowflake_next() FROM generate_series(1, 2000)"
IFS='|' read -r burst_slot burst_ts <<<"$(q "$main" "${won[0]}" postgres "SELECT (p).backend_slot, (p).ts
  FROM (SELECT snowflake.snowflake_parse(max(id)) AS p FROM burst) b")"
kept=$((burst_slot > 10 ? 10 : 11))-$((burst_slot > 10 ? burst_slot - 1 : 19))
gave_up=$(q "$main" "${won[0]}" master "SELECT clock_timestamp() < '$burst_ts';
  SELECT (snowflake.snowflake_configure(slots => '$kept')).node_id; SELECT clock_timestamp() > '$burst_ts'")
[[ $gave_up == $'t\n3\nt' ]] ||
  fail "slot $burst_slot given up (kept $kept) after a burst to $burst_ts: $gave_up (burst ahead before|configured|clock past it after)"
for d in share1 share2 race1 race2; do sql "$main" "DROP DATABASE $d WITH (FORCE)"; done
ok "slot $burst_slot given up while a burst's last id on it lay ahead of the clock: the change returned once the clock had passed it"

# --- pg_tle: CREATE EXTENSION by the master user, and the update path ---------------------

if $have_tle; then
  db tle
  sql "$main" "CREATE EXTENSION pg_tle" -d tle -c "GRANT pgtle_admin TO master"
  cluster_psql "$main" -q -d tle -U master -f "$out/snowflake_sql--$release--pg_tle.sql" >/dev/null ||
    fail "registering with pg_tle"
  # The install warns that node 0 is database conform's; the database takes node 3.
  q "$main" tle master "CREATE SCHEMA snowflake; GRANT USAGE ON SCHEMA snowflake TO PUBLIC;
    SET client_min_messages = error; CREATE EXTENSION snowflake_sql SCHEMA snowflake; RESET client_min_messages;
    SELECT snowflake.snowflake_configure(node_id => 3)" >/dev/null
  [[ $(q "$main" tle postgres "SELECT r.rolname, r.rolsuper, e.extversion FROM pg_extension e JOIN pg_roles r ON r.oid = e.extowner
    WHERE extname = 'snowflake_sql'") == "master|f|$release" ]] || fail "the extension is not the master user's"
  before=$(q "$main" tle app "SELECT snowflake.snowflake_next()")
  ok "pg_tle: registered and created by the master user (not superuser), version $release; a plain role mints"
  cluster_psql "$main" -q -d tle -U master -f "$out/snowflake_sql--$next--pg_tle.sql" >/dev/null ||
    fail "registering $next with pg_tle"
  q "$main" tle master "ALTER EXTENSION snowflake_sql UPDATE" >/dev/null
  updated=$(q "$main" tle app "SELECT snowflake.snowflake_next(), (SELECT extversion FROM pg_extension WHERE extname = 'snowflake_sql'),
    (SELECT default_version FROM pgtle.available_extensions() WHERE name = 'snowflake_sql'), (SELECT node_id FROM snowflake.snowflake_status)")
  IFS='|' read -r id ext default node <<<"$updated"
  [[ $ext == "$next" && $default == "$next" && $node == 3 ]] || fail "after the update: $updated"
  ((id > before)) || fail "ids after the update ($id) not above those before ($before)"
  expect_error "$main" tle app 42501 'permission denied' "SELECT snowflake.snowflake_configure(node_id => 1)"
  ok "pg_tle: update path $release to $next and default version $next; settings kept, ids rising across the update"
  sql "$main" "DROP DATABASE tle WITH (FORCE)"
else
  skip "pg_tle: not installed in PostgreSQL $version (bash scripts/setup-pg_tle.sh; see /var/lib/snowflake_pg/pg_tle-1.5.2-pg$version.failed.log)"
fi

# --- An update from 0.3.0, and the move to the order of the layout ------------------------

# A database of 0.3.0 keeps the order it mints in: its stored layout, 0.3.0's default, is
# now the worker-first one, and sessions still running 0.3.0's code mint in it beside
# sessions of the new code. Its owner moves it to the new order with snowflake_configure,
# once no session mints (docs/managed.md, "The order of ids"). 0.3.0's release files are
# built by its own tree's sql_edition/build.sh.
if version_before "$PREVIOUS_RELEASE" "$release"; then
  old_tree=$(release_tree "$PREVIOUS_RELEASE" "$PREVIOUS_RELEASE_COMMIT") || fail "no tree of $PREVIOUS_RELEASE"
  bash "$old_tree/sql_edition/build.sh" "$out/$PREVIOUS_RELEASE" >/dev/null || fail "$PREVIOUS_RELEASE's sql_edition/build.sh failed"
  worker_first='time:41, node:2, slot:8, sequence:12'
  default_spec='time:41, sequence:12, node:2, slot:8'
  # slot_held_in DB: the slot another session of DB holds, once it holds one.
  slot_held_in() {
    local slot
    for _ in $(seq 50); do
      slot=$(q "$main" "$1" postgres "SELECT min(objid) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1936617335
        AND database = (SELECT oid FROM pg_database WHERE datname = '$1')")
      [[ -n $slot ]] && { echo "$slot"; return; }
      sleep 0.1
    done
    fail "no session of $1 took a slot"
  }
  # one_slot_each DB: ids of table ids of DB parsed otherwise than node 1 and one slot for
  # all the ids of a session (an id read in the wrong order shows other slots).
  one_slot_each() {
    q "$main" "$1" postgres "SELECT count(*) FILTER (WHERE (snowflake.snowflake_parse(id)).node_id <> $2)
        + (SELECT count(*) FROM (SELECT pid FROM ids GROUP BY pid
                                  HAVING count(DISTINCT (snowflake.snowflake_parse(id)).backend_slot) > 1) p)
      FROM ids"
  }

  # psql -f: 0.3.0 installed and minting; one session holds its slot and mints in one
  # transaction across the update, while new sessions mint with the new code.
  db upd
  install_psql "$main" upd snowflake "$out/$PREVIOUS_RELEASE/snowflake_sql--$PREVIOUS_RELEASE.sql"
  q "$main" upd master "SELECT snowflake.snowflake_configure(node_id => 1);
    CREATE TABLE ids (id bigint PRIMARY KEY, era text NOT NULL, pid int NOT NULL DEFAULT pg_backend_pid());
    GRANT INSERT, SELECT ON ids TO app" >/dev/null
  for era in old new reordered; do
    echo "INSERT INTO ids (id, era) SELECT snowflake.snowflake_next(), '$era' FROM generate_series(1, 10);" >"$CLUSTERS_DIR/$main/$era.sql"
  done
  pgbench_run "$main" --db upd --user app -c 8 -j 2 -C -T 1 -f "$CLUSTERS_DIR/$main/old.sql" >/dev/null || fail "minting with $PREVIOUS_RELEASE"
  updated_flag=$CLUSTERS_DIR/$main/upd.updated
  rm -f "$updated_flag"
  cluster_psql "$main" -qAt -d upd -U app >"$CLUSTERS_DIR/$main/upd-across.out" 2>&1 <<SQL &
INSERT INTO ids (id, era) VALUES (snowflake.snowflake_next(), 'across');
BEGIN;
INSERT INTO ids (id, era) VALUES (snowflake.snowflake_next(), 'across');
\! while [ ! -f $updated_flag ]; do sleep 0.05; done
INSERT INTO ids (id, era) SELECT snowflake.snowflake_next(), 'across'
  FROM generate_series(1, 1000) g, LATERAL (SELECT pg_sleep(g * 0 + 0.001)) s;
COMMIT;
SQL
  across=$!
  slot_held_in upd >/dev/null
  install_psql "$main" upd
  touch "$updated_flag"
  pgbench_run "$main" --db upd --user app -c 8 -j 2 -C -T 1 -f "$CLUSTERS_DIR/$main/new.sql" >/dev/null || fail "minting after the update"
  wait "$across" || fail "the session minting across the update: $(cat "$CLUSTERS_DIR/$main/upd-across.out")"
  kept=$(q "$main" upd app "SELECT snowflake.snowflake_sql_version(), snowflake.snowflake_layout(),
      (SELECT string_agg(format('%s %s', configured, layout), ', ' ORDER BY configured) FROM snowflake.snowflake_settings);
    SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE era = 'across') FROM ids")
  [[ $(sed -n 1p <<<"$kept") == "$release|$worker_first|f $worker_first, t $worker_first" ]] ||
    fail "the update from $PREVIOUS_RELEASE: $(sed -n 1p <<<"$kept") (version|layout|settings)"
  IFS='|' read -r rows distinct across_rows <<<"$(sed -n 2p <<<"$kept")"
  ((rows == distinct && across_rows == 1002)) || fail "ids minted across the update: $rows, $distinct distinct, $across_rows of the session across it"
  [[ $(one_slot_each upd 1) == 0 ]] || fail "ids minted across the update parse with another node, or several slots a session"
  ok "psql -f update from $PREVIOUS_RELEASE's file: layout '$worker_first' kept; $rows ids of $PREVIOUS_RELEASE's code, of a session minting across the update and of the new code, all distinct, each parsing to its node and session's slot"
  # A database that never configured anything keeps 0.3.0's default too, now in the
  # configured row, which a dump of the extension keeps.
  db upd0
  install_psql "$main" upd0 snowflake "$out/$PREVIOUS_RELEASE/snowflake_sql--$PREVIOUS_RELEASE.sql"
  install_psql "$main" upd0
  kept=$(q "$main" upd0 app "SELECT snowflake.snowflake_layout(),
    (SELECT string_agg(format('%s %s', configured, layout), ', ' ORDER BY configured) FROM snowflake.snowflake_settings)")
  [[ $kept == "$worker_first|f $worker_first, t $worker_first" ]] ||
    fail "the update of a database on $PREVIOUS_RELEASE's defaults: $kept (layout|settings rows)"
  sql "$main" "DROP DATABASE upd0 WITH (FORCE)"
  ok "an update of a database on $PREVIOUS_RELEASE's defaults keeps its layout, written as configured"

  # The move to the order of the layout: refused while a session holds a slot, or to
  # another layout (with a hint of the one it may take).
  (q "$main" upd app "SELECT snowflake.snowflake_next(); SELECT pg_sleep(3)" >/dev/null 2>&1 &)
  slot=$(slot_held_in upd)
  expect_error "$main" upd master 55006 "sessions of database \"upd\" hold slots: the order of its ids cannot change while they mint.*DETAIL:  Slots held until their sessions end: $slot \\(process [0-9]+\\)" \
    "SELECT snowflake.snowflake_configure(layout => 'default')"
  expect_error "$main" upd master 55000 "ids have been minted under layout '$worker_first'.*HINT:  The one change allowed .*layout => '$default_spec'" \
    "SELECT snowflake.snowflake_configure(layout => 'time:41, sequence:12, slot:8, node:2')"
  for _ in $(seq 50); do
    [[ $(q "$main" upd postgres "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1936617335") == 0 ]] && break
    sleep 0.1
  done
  # A REPEATABLE READ transaction whose snapshot is older than the move, in a session
  # that takes its slot after it, is refused (40001) rather than minting in the old order.
  moved_flag=$CLUSTERS_DIR/$main/upd.moved
  rm -f "$moved_flag"
  cluster_psql "$main" -qAt -d upd -U app -v VERBOSITY=verbose >"$CLUSTERS_DIR/$main/upd-snapshot.out" 2>&1 <<SQL &
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM ids;
\! while [ ! -f $moved_flag ]; do sleep 0.05; done
INSERT INTO ids (id, era) VALUES (snowflake.snowflake_next(), 'stale snapshot');
SQL
  snapshot_session=$!
  for _ in $(seq 50); do
    [[ $(q "$main" upd postgres "SELECT count(*) FROM pg_stat_activity WHERE datname = 'upd' AND state = 'idle in transaction'") == 1 ]] && break
    sleep 0.1
  done
  moved_at=$(q "$main" upd master "SELECT (snowflake.snowflake_configure(layout => 'default')).reordered_at")
  touch "$moved_flag"
  ! wait "$snapshot_session" || fail "a REPEATABLE READ transaction older than the move minted: $(cat "$CLUSTERS_DIR/$main/upd-snapshot.out")"
  grep -qE 'ERROR:  40001: could not serialize access due to concurrent (update|delete)' "$CLUSTERS_DIR/$main/upd-snapshot.out" ||
    fail "a REPEATABLE READ transaction older than the move: $(cat "$CLUSTERS_DIR/$main/upd-snapshot.out")"
  pgbench_run "$main" --db upd --user app -c 8 -j 2 -C -T 1 -f "$CLUSTERS_DIR/$main/reordered.sql" >/dev/null || fail "minting after the move"
  moved=$(q "$main" upd app "SELECT snowflake.snowflake_layout(), count(*), count(DISTINCT id),
      max(id) FILTER (WHERE era <> 'reordered') < min(id) FILTER (WHERE era = 'reordered'),
      max((snowflake.snowflake_parse(id)).ts) FILTER (WHERE era <> 'reordered') < '$moved_at',
      min((snowflake.snowflake_parse(id)).ts) FILTER (WHERE era = 'reordered') >= '$moved_at',
      '$moved_at' <= now(),
      count(*) FILTER (WHERE snowflake.snowflake_parse(id)::text
                             <> snowflake.snowflake_parse(id, CASE era WHEN 'reordered' THEN 'default' ELSE 'worker-first' END)::text)
    FROM ids")
  IFS='|' read -r layout_now rows distinct rising before after past misread <<<"$moved"
  [[ $layout_now == "$default_spec" && $rows == "$distinct" && $rising$before$after$past == tttt && $misread == 0 ]] ||
    fail "after the move at $moved_at: $moved (layout|ids|distinct|new above old|old before|new from|at or before now|misread)"
  [[ $(one_slot_each upd 1) == 0 ]] || fail "ids of both orders parse with another node, or several slots a session"
  expect_error "$main" upd master 55000 "ids have been minted under layout '$default_spec'" \
    "SELECT snowflake.snowflake_configure(layout => 'worker-first')"
  ok "moved to layout '$default_spec' at $moved_at, once no session held a slot: $rows ids distinct and rising, those of earlier ticks parsing in the worker-first order, the later ones in the new; no way back"
  if $have_native; then
    # The native with snowflake.reordered_at the time of the move reads every id alike.
    sql "$main" "CREATE EXTENSION snowflake_pg" -d upd
    native_reordered() {
      sql "$main" "SELECT public.snowflake_layout()" -d upd -c "ALTER SYSTEM $1" -c "SELECT pg_reload_conf()" >/dev/null
    }
    native_reordered "SET snowflake.reordered_at = '$moved_at'"
    for _ in $(seq 50); do
      [[ $(sql "$main" "SELECT public.snowflake_layout()" -d upd -c "SELECT current_setting('snowflake.reordered_at') <> ''" | tail -1) == t ]] && break
      sleep 0.1
    done
    differ=$(q "$main" upd postgres "SELECT count(*) FILTER (WHERE public.snowflake_parse(id)::text <> snowflake.snowflake_parse(id)::text) FROM ids")
    native_reordered "RESET snowflake.reordered_at"
    [[ $differ == 0 ]] || fail "$differ ids parse otherwise under the native with snowflake.reordered_at = '$moved_at'"
    ok "the native with snowflake.reordered_at = '$moved_at' parses all $rows ids as the SQL edition does"
  fi
  sql "$main" "DROP DATABASE upd WITH (FORCE)"
  # Databases sharing a node id under slot ranges mint with one layout: one of them alone
  # cannot move.
  for i in 1 2; do
    db "updshare$i"
    install_psql "$main" "updshare$i"
    q "$main" "updshare$i" master "SELECT snowflake.snowflake_configure(node_id => 1, layout => 'worker-first',
      slots => '$(((i - 1) * 128))-$((i * 128 - 1))')" >/dev/null
    q "$main" "updshare$i" app "SELECT snowflake.snowflake_next()" >/dev/null
  done
  expect_error "$main" updshare1 master 55000 'database "updshare2" of this server mints under node id 1 with another layout or epoch' \
    "SELECT snowflake.snowflake_configure(layout => 'default')"
  [[ $(q "$main" updshare1 app "SELECT snowflake.snowflake_layout(), reordered_at IS NULL FROM snowflake.snowflake_settings WHERE configured") == "$worker_first|t" ]] ||
    fail "a database sharing node 1 moved alone"
  for i in 1 2; do sql "$main" "DROP DATABASE updshare$i WITH (FORCE)"; done
  ok "two databases sharing node 1 under slot ranges: one alone cannot move to the new order"

  # pg_tle: 0.3.0 registered and created, then ALTER EXTENSION UPDATE and the move.
  if $have_tle; then
    db tle030
    sql "$main" "CREATE EXTENSION pg_tle" -d tle030 -c "SET client_min_messages = warning" -c "GRANT pgtle_admin TO master"
    cluster_psql "$main" -q -d tle030 -U master -f "$out/$PREVIOUS_RELEASE/snowflake_sql--$PREVIOUS_RELEASE--pg_tle.sql" >/dev/null ||
      fail "registering $PREVIOUS_RELEASE with pg_tle"
    q "$main" tle030 master "CREATE SCHEMA snowflake; GRANT USAGE ON SCHEMA snowflake TO PUBLIC;
      SET client_min_messages = error; CREATE EXTENSION snowflake_sql SCHEMA snowflake; RESET client_min_messages;
      SELECT snowflake.snowflake_configure(node_id => 2);
      CREATE TABLE ids (id bigint PRIMARY KEY, era text NOT NULL, pid int NOT NULL DEFAULT pg_backend_pid());
      GRANT INSERT, SELECT ON ids TO app" >/dev/null
    pgbench_run "$main" --db tle030 --user app -c 4 -j 2 -C -t 10 -f "$CLUSTERS_DIR/$main/old.sql" >/dev/null || fail "minting with $PREVIOUS_RELEASE (pg_tle)"
    cluster_psql "$main" -q -d tle030 -U master -f "$out/snowflake_sql--$release--pg_tle.sql" >/dev/null ||
      fail "registering $release with pg_tle"
    q "$main" tle030 master "ALTER EXTENSION snowflake_sql UPDATE" >/dev/null
    pgbench_run "$main" --db tle030 --user app -c 4 -j 2 -C -t 10 -f "$CLUSTERS_DIR/$main/new.sql" >/dev/null || fail "minting after ALTER EXTENSION UPDATE"
    kept=$(q "$main" tle030 app "SELECT (SELECT extversion FROM pg_extension WHERE extname = 'snowflake_sql'), snowflake.snowflake_layout()")
    [[ $kept == "$release|$worker_first" ]] || fail "pg_tle's update from $PREVIOUS_RELEASE to $release: $kept (version|layout)"
    moved_at=$(q "$main" tle030 master "SELECT (snowflake.snowflake_configure(layout => 'default')).reordered_at")
    pgbench_run "$main" --db tle030 --user app -c 4 -j 2 -C -t 10 -f "$CLUSTERS_DIR/$main/reordered.sql" >/dev/null || fail "minting after the move (pg_tle)"
    moved=$(q "$main" tle030 app "SELECT count(*), count(DISTINCT id),
        max(id) FILTER (WHERE era = 'old') < min(id) FILTER (WHERE era = 'new')
          AND max(id) FILTER (WHERE era = 'new') < min(id) FILTER (WHERE era = 'reordered'),
        count(*) FILTER (WHERE snowflake.snowflake_parse(id)::text
                               <> snowflake.snowflake_parse(id, CASE era WHEN 'reordered' THEN 'default' ELSE 'worker-first' END)::text),
        (SELECT reordered_at = '$moved_at' FROM snowflake.snowflake_settings WHERE configured)
      FROM ids")
    [[ $moved == "1200|1200|t|0|t" ]] || fail "pg_tle, updated from $PREVIOUS_RELEASE and moved at $moved_at: $moved (ids|distinct|rising|misread|kept for a dump)"
    [[ $(one_slot_each tle030 2) == 0 ]] || fail "ids of the pg_tle database parse with another node, or several slots a session"
    sql "$main" "DROP DATABASE tle030 WITH (FORCE)"
    ok "pg_tle: $PREVIOUS_RELEASE created, ALTER EXTENSION UPDATE to $release keeps layout '$worker_first', then the move: 1,200 ids distinct and rising, each parsing in its order; reordered_at in the configured row, which a dump keeps"
  else
    skip "pg_tle update from $PREVIOUS_RELEASE: pg_tle not installed in PostgreSQL $version"
  fi
else
  skip "an update from $PREVIOUS_RELEASE: this tree's edition is $release"
fi

# --- Moving a database to the native extension and back ----------------------------------

db move1
install_psql "$main" move1
q "$main" move1 master "SELECT snowflake.snowflake_configure(node_id => 1);
  CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake.snowflake_next(), era text);
  INSERT INTO orders (era) SELECT 'sql' FROM generate_series(1, 1000)" >/dev/null
# An upgrade of a psql -f install: the next release's script run over it.
install_psql "$main" move1 snowflake "$out/snowflake_sql--$next.sql"
[[ $(q "$main" move1 master "SELECT snowflake.snowflake_sql_version(), snowflake.snowflake_next() > (SELECT max(id) FROM orders),
  (SELECT node_id FROM snowflake.snowflake_status)") == "$next|t|1" ]] || fail "the psql -f update to $next"
ok "psql -f update of an install to $next: settings kept, ids rising"
# A whole database, the edition's schema included, dumped and restored: the
# slots' sequences have new oids there, so the first call makes snowflake_next() again
# (its fingerprint, 60_next.sql) and goes on above the dumped ids, under the same settings.
db restore1
install_psql "$main" restore1
q "$main" restore1 master "SELECT snowflake.snowflake_configure(node_id => 2);
  CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake.snowflake_next(), era text); GRANT INSERT, SELECT ON t TO app" >/dev/null
q "$main" restore1 app "INSERT INTO t (era) SELECT 'before' FROM generate_series(1, 1000)"
made=$(q "$main" restore1 postgres "SELECT md5(prosrc) FROM pg_proc WHERE oid = 'snowflake.snowflake_next()'::regprocedure")
as_pg "$bin/pg_dump" -Fc -h "$CLUSTERS_DIR/$main" -p "$base" -U postgres restore1 -f "$CLUSTERS_DIR/$main/restore1.dump"
# Into a database of the same name (the claims name the database), made anew.
sql "$main" "DROP DATABASE restore1 WITH (FORCE)" -c "CREATE DATABASE restore1 OWNER master"
as_pg "$bin/pg_restore" -d restore1 -h "$CLUSTERS_DIR/$main" -p "$base" -U postgres "$CLUSTERS_DIR/$main/restore1.dump" ||
  fail "restoring a database with the edition's schema"
said=$(q "$main" restore1 app "INSERT INTO t (era) SELECT 'after' FROM generate_series(1, 1000)" 2>&1)
[[ -z $said ]] || fail "the first call after a restore says: $said"
restored=$(q "$main" restore1 postgres "SELECT (SELECT min(id) FROM t WHERE era = 'after') > (SELECT max(id) FROM t WHERE era = 'before'),
  bool_and((snowflake.snowflake_parse(id)).node_id = 2), count(DISTINCT id),
  (SELECT md5(prosrc) FROM pg_proc WHERE oid = 'snowflake.snowflake_next()'::regprocedure) <> '$made' FROM t")
[[ $restored == "t|t|2000|t" ]] || fail "a restored database: $restored (above|node 2|distinct|made again)"
sql "$main" "DROP DATABASE restore1 WITH (FORCE)"
ok "a database dumped and restored whole: snowflake_next() made again for the new sequences, ids above the dumped ones, node id kept"
if $have_native; then
  # dump_app FROM TO: the application's objects of FROM restored into TO, the edition's
  # schema and any extension left out (docs/managed.md, "Moving between editions").
  dump_app() {
    as_pg "$bin/pg_dump" -Fc -N snowflake -h "$CLUSTERS_DIR/$main" -p "$base" -U postgres "$1" -f "$CLUSTERS_DIR/$main/$1.dump"
    as_pg "$bin/pg_restore" -l "$CLUSTERS_DIR/$main/$1.dump" | grep -v -e ' EXTENSION ' -e ' snowflake snowflake_' >"$CLUSTERS_DIR/$main/$1.list"
    as_pg "$bin/pg_restore" -L "$CLUSTERS_DIR/$main/$1.list" -d "$2" -h "$CLUSTERS_DIR/$main" -p "$base" -U postgres \
      "$CLUSTERS_DIR/$main/$1.dump"
  }
  db move2
  sql "$main" "CREATE SCHEMA snowflake; CREATE EXTENSION snowflake_pg SCHEMA snowflake" -d move2
  dump_app move1 move2 || fail "restoring move1 into move2 (native)"
  q "$main" move2 postgres "INSERT INTO orders (era) SELECT 'native' FROM generate_series(1, 1000)"
  moved=$(q "$main" move2 postgres "SELECT count(DISTINCT id), (SELECT min(id) FROM orders WHERE era = 'native') > (SELECT max(id) FROM orders WHERE era = 'sql') FROM orders")
  [[ $moved == "2000|t" ]] || fail "SQL edition to native: $moved (distinct|native above)"
  sql "$main" "DROP DATABASE move1 WITH (FORCE)"
  db move3
  install_psql "$main" move3
  q "$main" move3 master "SELECT snowflake.snowflake_configure(node_id => 1)" >/dev/null
  dump_app move2 move3 || fail "restoring move2 into move3 (SQL edition)"
  q "$main" move3 postgres "INSERT INTO orders (era) SELECT 'sql again' FROM generate_series(1, 1000)"
  moved=$(q "$main" move3 postgres "SELECT count(DISTINCT id), (SELECT min(id) FROM orders WHERE era = 'sql again') > (SELECT max(id) FROM orders WHERE era <> 'sql again'),
    count(*) FILTER (WHERE (snowflake.snowflake_parse(id)).ts > clock_timestamp()) FROM orders")
  [[ $moved == "3000|t|0" ]] || fail "native back to the SQL edition: $moved (distinct|new above|from the future)"
  ok "a database moved by dump and restore from the SQL edition to the native extension and back: 3,000 ids distinct and rising"
  sql "$main" "DROP DATABASE move2 WITH (FORCE)" -c "DROP DATABASE move3 WITH (FORCE)"
else
  skip "moving to the native extension: snowflake_pg is not installed in PostgreSQL $version"
fi

# --- A clock stepped back inside a session ---------------------------------------------------

[[ -n $faketime_lib && -f $faketime_lib ]] || fail "libfaketime is not installed (scripts/setup.sh installs it)"
# The clock server's clock is real time plus the offset in its file, read at every reading.
echo +0 >"$CLUSTERS_DIR/$clock.offset" && chmod 644 "$CLUSTERS_DIR/$clock.offset"
step() { echo "$1" >"$CLUSTERS_DIR/$clock.offset.new" && mv -f "$CLUSTERS_DIR/$clock.offset.new" "$CLUSTERS_DIR/$clock.offset"; }
servers+=("$clock")
CLUSTER_ENV="LD_PRELOAD=$faketime_lib FAKETIME_TIMESTAMP_FILE=$CLUSTERS_DIR/$clock.offset FAKETIME_NO_CACHE=1" \
  cluster_start "$clock" "$version" $((base + 1)) autovacuum=off fsync=off wal_level=replica max_wal_senders=4 wal_keep_size=512MB >/dev/null
sql "$clock" "CREATE ROLE master LOGIN CREATEROLE CREATEDB" -c "CREATE ROLE app LOGIN" -c "CREATE DATABASE fo OWNER master"
install_psql "$clock" fo
stepped=$(cluster_psql "$clock" -qAt -d fo -U app -v ON_ERROR_STOP=0 -v VERBOSITY=verbose 2>&1 <<SQL
SELECT snowflake.snowflake_next() AS a \\gset
\\! bash -c 'echo -0.5 >$CLUSTERS_DIR/$clock.offset.new && mv -f $CLUSTERS_DIR/$clock.offset.new $CLUSTERS_DIR/$clock.offset'
SELECT snowflake.snowflake_next() AS b \\gset
SELECT :b > :a AS absorbed;
\\! bash -c 'echo -5 >$CLUSTERS_DIR/$clock.offset.new && mv -f $CLUSTERS_DIR/$clock.offset.new $CLUSTERS_DIR/$clock.offset'
SELECT snowflake.snowflake_next();
\\! bash -c 'echo +0 >$CLUSTERS_DIR/$clock.offset.new && mv -f $CLUSTERS_DIR/$clock.offset.new $CLUSTERS_DIR/$clock.offset'
SELECT snowflake.snowflake_next() > :b AS after;
SQL
)
step +0
grep -q '^t$' <<<"$(sed -n 1p <<<"$stepped")" || fail "a step back of 0.5 s was not absorbed: $stepped"
grep -qE "ERROR:  55000: the system clock is (4[5-9][0-9]{2}|50[0-9]{2}) ms behind the last snowflake id of this backend slot" <<<"$stepped" ||
  fail "a step back of 5 s was not refused with 55000: $stepped"
[[ $(tail -1 <<<"$stepped") == t ]] || fail "no id above the last once the clock is back: $stepped"
ok "a clock stepped back 0.5 s inside a session is absorbed (ids rise); 5 s is refused with 55000; ids go on above once it is back"
# The status counts the step absorbed once (not each of the calls after it, which read a
# clock no further back than the one before), and the refusal, through the ROLLBACK of
# their transactions; the lead of the step is the furthest, within the bound of 1 s.
counted() { q "$clock" fo app "SELECT clock_steps_absorbed, clock_steps_refused, furthest_lead_ms FROM snowflake.snowflake_status"; }
IFS='|' read -r absorbed refused _ <<<"$(counted)"
((absorbed == 1 && refused == 1)) || fail "after the steps above, clock_steps_absorbed $absorbed and clock_steps_refused $refused, not 1 and 1"
cluster_psql "$clock" -qAt -d fo -U app -v ON_ERROR_STOP=0 >/dev/null 2>&1 <<SQL
BEGIN;
SELECT snowflake.snowflake_next();
\\! bash -c 'echo -0.5 >$CLUSTERS_DIR/$clock.offset.new && mv -f $CLUSTERS_DIR/$clock.offset.new $CLUSTERS_DIR/$clock.offset'
SELECT count(DISTINCT snowflake.snowflake_next()) FROM generate_series(1, 100);
ROLLBACK;
BEGIN;
\\! bash -c 'echo -5 >$CLUSTERS_DIR/$clock.offset.new && mv -f $CLUSTERS_DIR/$clock.offset.new $CLUSTERS_DIR/$clock.offset'
SELECT snowflake.snowflake_next();
ROLLBACK;
SQL
step +0
IFS='|' read -r absorbed refused furthest <<<"$(counted)"
((absorbed == 2 && refused == 2 && furthest >= 400 && furthest <= 1000)) ||
  fail "after a step absorbed and one refused, each in a transaction rolled back: $(counted) (absorbed|refused|furthest_lead_ms), not 2|2|400 to 1000"
ok "clock_steps_absorbed 2 and clock_steps_refused 2 after each step again in a transaction rolled back; furthest_lead_ms $furthest"

# --- A hot standby, and failover to standbys whose clocks are behind ------------------------

q "$clock" fo master "CREATE TABLE handed (id bigint PRIMARY KEY DEFAULT snowflake.snowflake_next(), era text);
  GRANT INSERT, SELECT ON handed TO app;
  SELECT snowflake.snowflake_configure(max_lead_ms => 2000)" >/dev/null
# standby_of NAME PORT OFFSET: a streaming standby of the clock server, its clock OFFSET
# seconds off real time for good (libfaketime reads a fixed offset once).
standby_of() {
  servers+=("$1")
  CLUSTER_ENV="LD_PRELOAD=$faketime_lib FAKETIME=$3" cluster_standby "$clock" "$1" "$2" >/dev/null
}
standby_of "$standby" $((base + 2)) -1
standby_of "$behind" $((base + 3)) -10
expect_error "$standby" fo app 25006 'cannot mint snowflake ids on a server in recovery' "SELECT snowflake.snowflake_next()"
[[ $(q "$standby" fo app "SELECT snowflake.snowflake_floor(now()) > 0, (snowflake.snowflake_parse(4194304)).ts") == "t|2020-01-01 00:00:00.001+00" ]] ||
  fail "floor and parse on a hot standby"
ok "a hot standby: floor and parse work, snowflake_next() refuses with 25006"
# The primary hands out ids from many sessions (many slots), the last ones just now.
cat >"$CLUSTERS_DIR/$clock/hand.sql" <<'SQL'
INSERT INTO handed (era) SELECT 'old' FROM generate_series(1, 10);
SQL
pgbench_run "$clock" --db fo --user app -c 8 -j 2 -C -T 1 -f "$CLUSTERS_DIR/$clock/hand.sql" >/dev/null || fail "minting on the primary"
q "$clock" fo app "INSERT INTO handed (era) SELECT 'old' FROM generate_series(1, 3000)"
lsn=$(q "$clock" fo postgres "SELECT pg_current_wal_lsn()")
for _ in $(seq 100); do
  [[ $(q "$standby" fo postgres "SELECT pg_last_wal_replay_lsn() >= '$lsn' AND pg_last_wal_replay_lsn() IS NOT NULL") == t &&
     $(q "$behind" fo postgres "SELECT pg_last_wal_replay_lsn() >= '$lsn'") == t ]] && break
  sleep 0.1
done
old_max=$(q "$clock" fo postgres "SELECT max(id) FROM handed")
as_pg "$bin/pg_ctl" -D "$CLUSTERS_DIR/$clock/data" -m immediate -w stop >/dev/null
for name in "$standby" "$behind"; do as_pg "$bin/pg_ctl" -D "$CLUSTERS_DIR/$name/data" -w promote >/dev/null; done
sed 's/old/new/' "$CLUSTERS_DIR/$clock/hand.sql" >"$CLUSTERS_DIR/$clock/hand-new.sql"
pgbench_run "$standby" --db fo --user app -c 8 -j 2 -C -T 1 -f "$CLUSTERS_DIR/$clock/hand-new.sql" >/dev/null ||
  fail "minting on the promoted standby"
promoted=$(q "$standby" fo postgres "SELECT count(*), min(id) > $old_max, count(DISTINCT (snowflake.snowflake_parse(id)).backend_slot),
    (snowflake.snowflake_parse(min(id))).ts - (snowflake.snowflake_parse($old_max)).ts > interval '1 s'
  FROM handed WHERE era = 'new'")
IFS='|' read -r rows above slots margin <<<"$promoted"
[[ $above == t && $margin == t && $rows -gt 0 ]] ||
  fail "promoted standby 1 s behind: $promoted (ids|all above the old primary's|slots|1 s margin)"
ok "failover to a standby 1 s behind: $rows ids from $slots slots, every one more than 1 s (the margin) above the old primary's last ($old_max)"
expect_error "$behind" fo app 55000 'the system clock is [0-9]{4,5} ms behind the last snowflake id of this backend slot' \
  "INSERT INTO handed (era) VALUES ('refused')"
ok "failover to a standby 10 s behind (past max_lead_ms): refused with 55000, never an id at or below the old primary's"

# No internal error (XX000), crash or PANIC in the logs of this test's servers. Read here
# rather than with lib.sh's internal_errors_none, whose record belongs to tests/run.sh.
for name in "${servers[@]}"; do
  bad=$(grep -hE "PANIC|TRAP:|terminated by signal|$INTERNAL_ERROR_RE" "$CLUSTERS_DIR/$name/server.log" | head -3) || true
  [[ -z $bad ]] || fail "the log of $name shows: $bad"
done
ok "no internal error, crash or PANIC in the logs of ${#servers[@]} servers"
ok "all checks of the SQL edition on PostgreSQL $version in $((SECONDS - start_time)) s"
