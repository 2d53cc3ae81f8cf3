#!/usr/bin/env bash
# A node id PostgreSQL cannot hold, and restart-only settings changed with ALTER SYSTEM.
# snowflake.node_id given a value that is no node id (not an integer, negative, past the
# 32 bits), from wherever a value can come (the configuration file, ALTER SYSTEM, ALTER
# ROLE, ALTER DATABASE, PGOPTIONS, a SET before the library was loaded): every id is
# refused with an error naming the value, never minted as node 0, which PostgreSQL would
# fall back to. On a preloading server, ALTER SYSTEM refuses a bad snowflake.layout,
# snowflake.node_bits or snowflake.epoch with the message the server would give at its
# next start, and takes a good one, with which the server then starts.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
port=$((port_base + 50))

unreadable() { echo "22023: snowflake.node_id = \"$1\" is not a node id.*DETAIL:  It is not an integer"; }
out_of_range='22023: snowflake.node_id = -?[0-9]+ does not fit in snowflake.node_bits = 2'

for preload in no yes; do
  settings=()
  [[ $preload == yes ]] && settings=(shared_preload_libraries=snowflake_pg)
  # From postgresql.conf: each value, a server of its own.
  for value in abc "''" -1 -7 2147483648; do
    name=never-node-0-$version
    shown=${value//\'/}
    start "$name" "$port" "${settings[@]}"
    cluster_stop "$name"
    echo "snowflake.node_id = '$shown'" >>"$CLUSTERS_DIR/$name/data/postgresql.conf"
    cluster_launch "$name" "$port" log_error_verbosity=verbose "${settings[@]}"
    pattern=$(unreadable "$shown")
    [[ $value == -* ]] && pattern=$out_of_range
    sql "$name" "CREATE EXTENSION snowflake_pg"
    expect_error "$name" "SELECT snowflake_next()" "$pattern"
    # Fixed in the session, it mints; reset to the configured value, it refuses again.
    [[ $(sql "$name" "SET snowflake.node_id = 1" -c "SELECT (snowflake_parse(snowflake_next())).node_id") == 1 ]] ||
      fail "a node id SET over the bad one ($value) does not mint"
    expect_error "$name" "SELECT snowflake_next()" "$pattern" -c "SET snowflake.node_id = 1" -c "RESET snowflake.node_id"
    # Fixed in the configuration and reloaded, every new session mints with it.
    reload_setting "$name" snowflake.node_id 2
    [[ $(sql "$name" "SELECT (snowflake_parse(snowflake_next())).node_id") == 2 ]] ||
      fail "the bad node id ($value) fixed by ALTER SYSTEM and a reload does not mint"
    check_log "$name"
    cluster_stop "$name"
  done

  start "$name" "$port" "${settings[@]}"
  sql "$name" "CREATE EXTENSION snowflake_pg" -c "CREATE ROLE app LOGIN" -c "CREATE DATABASE other"
  sql "$name" "CREATE EXTENSION snowflake_pg" -d other
  # A SET before the library was loaded (by a session that has not loaded it yet).
  if [[ $preload == no ]]; then
    expect_error "$name" "SET snowflake.node_id = 'x1'" "$(unreadable x1)" -c "SELECT snowflake_next()"
    expect_error "$name" "SET snowflake.node_id = '-5'" "$out_of_range" -c "SELECT snowflake_next()"
  fi
  # PGOPTIONS, for one connection: refused at the first call; with preload, where every
  # process knows the setting, refused with the connection.
  out=$(PGOPTIONS='-c snowflake.node_id=1e99' sql "$name" "SELECT snowflake_next()" -v VERBOSITY=verbose 2>&1) &&
    fail "PGOPTIONS node id 1e99 minted: $out"
  pattern=$(unreadable 1e99)
  [[ $preload == yes ]] && pattern='FATAL:  invalid value for parameter "snowflake.node_id": "1e99"'
  grep -qE "$pattern" <<<"${out//$'\n'/ }" || fail "PGOPTIONS node id 1e99: $out"
  checked=$((checked + 1))
  # ALTER ROLE and ALTER DATABASE: with preload, where the session knows the setting, a
  # value that is no node id is refused at once; else PostgreSQL cannot check it yet, keeps
  # it, and the first call of a session it applies to refuses it.
  if [[ $preload == yes ]]; then
    expect_error "$name" "ALTER ROLE app SET snowflake.node_id = 'node-one'" \
      'invalid value for parameter "snowflake.node_id": "node-one"'
    expect_error "$name" "ALTER DATABASE other SET snowflake.node_id = -9" \
      'invalid value for parameter "snowflake.node_id": -9.*node ids go from 0 to 3'
  else
    for value in node-one -2; do
      sql "$name" "ALTER ROLE app SET snowflake.node_id = '$value'" -c "ALTER DATABASE other SET snowflake.node_id = '$value'"
      pattern=$(unreadable "$value")
      [[ $value == -* ]] && pattern=$out_of_range
      expect_error "$name" "SELECT snowflake_next()" "$pattern" -U app -d postgres
      expect_error "$name" "SELECT snowflake_next()" "$pattern" -d other
    done
    sql "$name" "ALTER ROLE app RESET snowflake.node_id" -c "ALTER DATABASE other RESET snowflake.node_id"
  fi
  # ALTER SYSTEM (which knows the setting only in a session that loaded the library):
  # a value that is no integer is refused at once; a negative one is taken, and after the
  # reload every new session refuses it.
  expect_error "$name" "LOAD 'snowflake_pg'" 'invalid value for parameter "snowflake.node_id": "seven"' \
    -c "ALTER SYSTEM SET snowflake.node_id = 'seven'"
  reload_setting "$name" snowflake.node_id -3
  expect_error "$name" "SELECT snowflake_next()" "$out_of_range"
  reload_setting "$name" snowflake.node_id default
  check_log "$name"
  cluster_stop "$name"
done

# Restart-only settings on a preloading server: ALTER SYSTEM refuses a bad value with the
# server's own start message, takes a good one, and the server starts with it.
name=alter-system-$version
start "$name" "$port" shared_preload_libraries=snowflake_pg
sql "$name" "CREATE EXTENSION snowflake_pg"
expect_error "$name" "ALTER SYSTEM SET snowflake.epoch = 'garbage'" \
  '22023: invalid value for snowflake.epoch: "garbage".*DETAIL:  Write a time from 1970 on'
expect_error "$name" "ALTER SYSTEM SET snowflake.epoch = '2999-01-01'" '22023: snowflake.epoch "2999-01-01" is in the future'
expect_error "$name" "ALTER SYSTEM SET snowflake.node_bits = 11" '22023: snowflake.node_bits = 11 is out of range'
expect_error "$name" "ALTER SYSTEM SET snowflake.layout = 'time:41, node:2'" '22023: invalid layout "time:41, node:2": the widths add up to 43'
expect_error "$name" "ALTER SYSTEM SET snowflake.layout = 'time:41, node:2, slot:8, sequence:12, epoch:2015-01-01'" \
  "leave the epoch out"
! grep -q snowflake "$CLUSTERS_DIR/$name/data/postgresql.auto.conf" || fail "a refused value reached postgresql.auto.conf"
sql "$name" "ALTER SYSTEM SET snowflake.epoch = '2021-01-01'" -c "ALTER SYSTEM SET snowflake.layout = 'js53'"
cluster_stop "$name"
cluster_launch "$name" "$port" log_error_verbosity=verbose shared_preload_libraries=snowflake_pg
[[ $(sql "$name" "SELECT layout, epoch = '2021-01-01+00' FROM snowflake_status") == *"|t" ]] ||
  fail "the server did not start with the layout and epoch that ALTER SYSTEM took"
sql "$name" "SELECT snowflake_next()" >/dev/null
check_log "$name"
figure "$checked node ids no node holds (not integers, negative, past 32 bits; from the file, ALTER SYSTEM," \
  "ALTER ROLE, ALTER DATABASE, PGOPTIONS, SET before loading; stock and preloading) and restart-only values" \
  "given to ALTER SYSTEM: each refused with its message, none minted as node 0; good values taken"
