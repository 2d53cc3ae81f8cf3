#!/usr/bin/env bash
# The security suite: a hostile login role against every function of the extension, on a
# fresh server, stock or (with `preload`) preloading the library. eve is a plain role
# with a schema of her own and CREATE on public; she shadows pg_catalog's functions and
# operators there (tests/security/hostile.sql), then calls every function of the
# extension with a search_path that puts her objects and temporary tables first
# (tests/security/calls.sql). Passes when she gained nothing: she is no superuser, nothing
# she planted ran with any rights but hers, snowflake_nodes holds only the claim her first
# id made (node 0, this server), the settings are as configured, and every error she met
# is one she should (no right, no gene bits).
# Usage: bash tests/security.sh 15|16|17|18 [stock|preload]   (extension installed)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
version=${1:?usage: security.sh VERSION [stock|preload]}
mode=${2:-stock}
here=$SNOWFLAKE_PG_ROOT/tests/security
name=security$version-$mode
case $mode in
  stock) cluster_start "$name" "$version" $((5460 + version)) ;;
  preload) cluster_start "$name" "$version" $((5470 + version)) shared_preload_libraries=snowflake_pg ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
trap 'cluster_stop "$name"' EXIT

fail() { echo "FAIL security ($mode server): $*" >&2; exit 1; }
as_eve() { cluster_psql "$name" -U eve -d postgres -v VERBOSITY=verbose "$@"; }

# As a superuser: the extension, eve and her schema; no id minted yet, so eve's first call
# is the one that looks up and writes the claim.
sql "$name" "CREATE EXTENSION snowflake_pg" \
  -c "CREATE ROLE eve LOGIN" -c "CREATE SCHEMA eve AUTHORIZATION eve" \
  -c "GRANT CREATE ON SCHEMA public TO eve"
as_eve -q -f "$here/hostile.sql" >/dev/null

# Every function of the extension is called.
while read -r function; do
  grep -q "$function(" "$here/calls.sql" || fail "tests/security/calls.sql does not call $function"
done < <(sql "$name" "SELECT DISTINCT p.proname FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
  WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake_pg')
    AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'")

out=$(as_eve -v ON_ERROR_STOP=0 -At -f "$here/calls.sql" 2>&1; echo) || true
echo "$out" >"$CLUSTERS_DIR/$name/calls.out"

# What she gained: nothing.
[[ $(sql "$name" "SELECT rolsuper FROM pg_roles WHERE rolname = 'eve'") == f ]] ||
  fail "eve became a superuser"
ran_as=$(sql "$name" "SELECT string_agg(DISTINCT by_role || ' via ' || via, ', ') FROM eve.calls WHERE by_role <> 'eve'")
[[ -z $ran_as ]] || fail "eve's objects ran with another role's rights: $ran_as"
claims=$(sql "$name" "SELECT string_agg(node_id || ' ' || server, ', ') FROM snowflake_nodes
  WHERE node_id <> 0 OR system_identifier <> (SELECT system_identifier FROM pg_control_system())")
[[ -z $claims ]] || fail "snowflake_nodes holds claims eve wrote: $claims"
[[ $(sql "$name" "SELECT count(*) FROM snowflake_nodes") == 1 ]] || fail "eve's first id made no claim"
[[ $(sql "$name" "SELECT count(*) FROM pg_file_settings WHERE name LIKE 'snowflake.%'") == 0 ]] ||
  fail "the configuration gained a snowflake setting"
# The errors she met: exactly those she should.
errors=$(grep -E '^psql:.*ERROR:' <<<"$out" | sed -E 's/^psql:[^E]*ERROR:  //' | sort) || true
expected=$(sort <<'ERRORS'
42501: permission denied for function snowflake_claim_node
42501: permission denied for table snowflake_nodes
55000: this server's layout has no gene bits
ERRORS
)
[[ $errors == "$expected" ]] || fail "eve met these errors: $errors"$'\n'"expected: $expected"$'\n'"$out"
# What the calls answered, in order (psql -At prints one line each, errors aside): ids,
# node 0, the conversion of her table, and the status with its claim.
preloaded=$([[ $mode == preload ]] && echo t || echo f)
answers=$(grep -vE '^(psql:|DETAIL:|HINT:|LOCATION:|CONTEXT:|SET$|CREATE TABLE$|INSERT )' <<<"$out" | tr '\n' ' ')
[[ $answers == "t t t 0 32 t t t t 1 integer to bigint; sequence eve.orders_id_seq dropped; default snowflake_next() 0|$preloaded 0|t 0 " ]] ||
  fail "eve's calls answered: $answers"

echo "ok security ($mode server, PostgreSQL $version): every function called by a hostile role;" \
  "$(sql "$name" "SELECT count(*) FROM eve.calls") calls of her stand-ins, all as herself; nothing gained"
