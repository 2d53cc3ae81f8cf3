#!/usr/bin/env bash
# Settings misuse: each mistake a DBA can make gets a clear error that names the fix,
# whether it is made with SET, in the configuration file or at server start.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
port=$((port_base + 16))

# expect_no_start NAME PATTERN SETTINGS...: the server refuses to start, saying PATTERN.
expect_no_start() {
  local name=$1 pattern=$2; shift 2
  start "$name" "$port" "$@" >/dev/null 2>&1 && fail "$name started with $*"
  grep -qE -e "$pattern" "$CLUSTERS_DIR/$name/server.log" ||
    fail "$name: the log does not say /$pattern/: $(tail -3 "$CLUSTERS_DIR/$name/server.log")"
  checked=$((checked + 1))
}
restart_with() { # NAME SETTINGS...: a fresh server with the extension created
  local name=$1; shift
  ((${#servers[@]} == 0)) || cluster_stop "${servers[-1]}"
  start "$name" "$port" "$@"
  sql "$name" "CREATE EXTENSION snowflake_pg; CREATE ROLE app LOGIN"
}

name=settings$version-stock
restart_with "$name"
# Once the library is loaded in a session, SET refuses a node id out of range at once;
# before that, the value is kept and the first call refuses it.
expect_error "$name" "SELECT snowflake_floor(now()); SET snowflake.node_id = 4" \
  'invalid value for parameter "snowflake.node_id": 4.*DETAIL:  With snowflake.node_bits = 2, node ids go from 0 to 3'
expect_error "$name" "SET snowflake.node_id = 4; SELECT snowflake_next()" \
  '22023: snowflake.node_id = 4 does not fit in snowflake.node_bits = 2'
expect_error "$name" "SELECT snowflake_floor(now()); SET snowflake.node_id = -1" \
  'invalid value for parameter "snowflake.node_id": -1.*DETAIL:  With snowflake.node_bits = 2, node ids go from 0 to 3'
expect_error "$name" "SELECT snowflake_floor(now()); SET ROLE app; SET snowflake.node_id = 1" \
  '42501: permission denied to set parameter "snowflake.node_id"'
# Before the library is loaded, PostgreSQL keeps the value, then drops it with a warning.
node=$(sql "$name" "SET ROLE app" -c "SET snowflake.node_id = 1" \
  -c "SELECT (snowflake_parse(snowflake_next())).node_id" 2>&1)
[[ $node == *'permission denied to set parameter "snowflake.node_id"'* && $(tail -n 1 <<<"$node") == 0 ]] ||
  fail "a non-superuser's node id before the library was loaded: $node"
checked=$((checked + 1))
expect_error "$name" "LOAD 'snowflake_pg'" 'snowflake.max_lead_ms.*60000' \
  -c "ALTER SYSTEM SET snowflake.max_lead_ms = 60001"
check_log "$name"

name=settings$version-node-id-in-file
restart_with "$name" snowflake.node_id=7
expect_error "$name" "SELECT snowflake_next()" \
  '22023: snowflake.node_id = 7 does not fit in snowflake.node_bits = 2.*HINT:  Set snowflake.node_id to a value in range'

name=settings$version-epoch-without-preload
restart_with "$name" "snowflake.epoch='2021-01-01'"
expect_error "$name" "SELECT snowflake_next()" \
  'snowflake.epoch = "2021-01-01" is set, but snowflake_pg is not in shared_preload_libraries.*HINT:  .*add snowflake_pg to shared_preload_libraries'

# snowflake.reordered_at on a stock server, from the configuration file at a reload: ids of
# earlier ticks parse in the worker-first order, later ones in the layout's; a backend that
# starts minting after it was set mints nothing before it. A value that is no time, or a
# time in the future, is refused by the calls that read it, naming the setting.
name=settings$version-reordered-at
restart_with "$name"
sql "$name" "CREATE TABLE old AS SELECT snowflake_compose(now() - interval '1 minute', 1, 200, 4000, 0, 'worker-first') AS id"
reload_setting "$name" snowflake.reordered_at "$(date -u '+%Y-%m-%d %H:%M:%S+00')"
parts=$(sql "$name" "SELECT concat_ws(' ', p.node_id, p.backend_slot, p.sequence, n.id > o.id, (snowflake_parse(n.id)).sequence = (snowflake_parse(n.id, 'default')).sequence)
  FROM old o, LATERAL snowflake_parse(o.id) p, (SELECT snowflake_next() AS id) n")
[[ $parts == '1 200 4000 t t' ]] || fail "an id of 0.3.0's order before snowflake.reordered_at: parts and the new id's: $parts"
checked=$((checked + 1))
reload_setting "$name" snowflake.reordered_at yesterday
expect_error "$name" "SELECT snowflake_parse(1)" \
  '22023: invalid value for snowflake.reordered_at: "yesterday".*DETAIL:  Write the time this server restarted into snowflake_pg 0.4.0'
reload_setting "$name" snowflake.reordered_at 2999-01-01
expect_error "$name" "SELECT snowflake_next()" '22023: snowflake.reordered_at "2999-01-01" is in the future'

# Without preload a backend's slot is its process number: more processes than the slot
# bits number are refused on every call (with preload, slots go by need: scenario 24).
name=settings$version-too-many-slots
restart_with "$name" max_connections=300
expect_error "$name" "SELECT snowflake_next()" \
  '53400: this server has [0-9]+ backend slots, more than the 256 that snowflake.node_bits = 2 leaves room for.*HINT:  Lower snowflake.node_bits'
cluster_stop "$name"

expect_no_start "settings$version-bad-epoch" 'invalid value for snowflake.epoch: "yesterday"' \
  shared_preload_libraries=snowflake_pg "snowflake.epoch=yesterday"
expect_no_start "settings$version-future-epoch" 'snowflake.epoch "2999-01-01" is in the future' \
  shared_preload_libraries=snowflake_pg "snowflake.epoch=2999-01-01"
expect_no_start "settings$version-node-bits" 'snowflake.node_bits = 11 is out of range' \
  shared_preload_libraries=snowflake_pg snowflake.node_bits=11
figure "$checked misuses of the settings (SET, configuration file, server start):" \
  "each refused with a message naming the setting and its allowed values or fix"
