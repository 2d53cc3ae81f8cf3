#!/usr/bin/env bash
# A renewal of the high-water mark that hangs: the mark file's temporary file is made a
# FIFO, so the process that renews the mark blocks in open() (as it would in an fsync on
# a stuck file system) while holding the renewal. Every other backend that then needs the
# mark moved waits for it; the wait can be cancelled (statement_timeout,
# pg_cancel_backend) and gives up with a clear error after its bound, never hangs. Once
# the FIFO is read and removed, minting goes on, with no duplicate.
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name=stalled-renewal-$version
port=$((port_base + 51)) psql_bin=$(pg_bin_of "$version")/psql
start "$name" "$port" shared_preload_libraries=snowflake_pg
sql "$name" "CREATE EXTENSION snowflake_pg" -c "CREATE TABLE minted (id bigint PRIMARY KEY)"
sql "$name" "INSERT INTO minted SELECT snowflake_next() FROM generate_series(1, 1000)"
fifo=$CLUSTERS_DIR/$name/data/pg_snowflake/high_water_mark.tmp
as_pg mkfifo "$fifo"

# mint_for SECONDS [psql args...]: mints for SECONDS, one id at a time, after the psql
# args (such as -c SET ...); prints the error that stopped it, on one line. The client
# gives up after 60 s: a call that cannot be stopped fails the scenario, not hangs it.
mint_for() {
  local seconds=$1; shift
  { timeout 60 "$psql_bin" -X -qAt -h "$CLUSTERS_DIR/$name" -p "$port" -U postgres -v VERBOSITY=verbose "$@" \
    -c "DO \$\$ DECLARE stop timestamptz := clock_timestamp() + interval '$seconds s';
      BEGIN WHILE clock_timestamp() < stop LOOP PERFORM snowflake_next(); END LOOP; END \$\$" 2>&1 || true; } |
    tr '\n' ' '
}

# The writer: renews at the first call past the renewal point, and blocks in the FIFO
# (its renewal is ahead of need, so the others go on minting within the reservation).
mint_for 25 >"$CLUSTERS_DIR/$name/writer.out" &
writer=$!
sleep 3 # past its reservation: the writer is stuck, the reservation not moved

# statement_timeout cancels a waiting call.
started=$SECONDS
out=$(mint_for 20 -c 'SET statement_timeout = 2000')
[[ $out == *"57014: canceling statement due to statement timeout"* ]] ||
  fail "a call waiting for the stuck renewal was not cancelled by statement_timeout: $out"
((SECONDS - started < 15)) || fail "statement_timeout took $((SECONDS - started)) s"
figure "statement_timeout (2 s) cancelled a call waiting for a stuck renewal after $((SECONDS - started)) s"

# pg_cancel_backend cancels one too.
mint_for 20 >"$CLUSTERS_DIR/$name/cancelled.out" &
cancelled=$!
sleep 3
sql "$name" "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'DO%' AND pid <> (
  SELECT pid FROM pg_stat_activity WHERE query LIKE 'DO%' ORDER BY backend_start LIMIT 1)" >/dev/null
# The cancelled call's client ends at once.
timeout 10 tail --pid=$cancelled -f /dev/null || fail "pg_cancel_backend did not end a waiting call"
grep -q "57014: canceling statement due to user request" "$CLUSTERS_DIR/$name/cancelled.out" ||
  fail "a cancelled waiting call said: $(cat "$CLUSTERS_DIR/$name/cancelled.out")"
figure "pg_cancel_backend ended a call waiting for a stuck renewal"

# Without either, the wait gives up at its bound with a clear error.
started=$SECONDS
out=$(mint_for 40)
[[ $out == *"55P03: the snowflake_pg high-water mark was not moved ahead within 10"*"HINT:  The process writing the mark file is stuck"* ]] ||
  fail "a call waiting for the stuck renewal said: $out"
figure "a call waiting for a stuck renewal gave up after $((SECONDS - started)) s: 55P03, the mark not moved ahead within the bound"

# The writer is freed: the FIFO opened here for reading and writing lets its open() go
# through, and once the FIFO is gone the next renewal writes the mark file again. Its own
# call, which by then needs the mark moved, fails: its write went into a FIFO, which cannot
# be synced. Minting goes on, above every id before.
exec 3<>"$fifo"
sleep 0.5
rm -f "$fifo"
wait "$writer"
exec 3<&-
grep -q "58030: could not move the snowflake_pg high-water mark ahead" "$CLUSTERS_DIR/$name/writer.out" ||
  fail "the call that was stuck renewing said: $(cat "$CLUSTERS_DIR/$name/writer.out")"
sql "$name" "INSERT INTO minted SELECT snowflake_next() FROM generate_series(1, 100000)"
check_distinct "$name" minted >/dev/null
[[ -f $CLUSTERS_DIR/$name/data/pg_snowflake/high_water_mark && ! -p $CLUSTERS_DIR/$name/data/pg_snowflake/high_water_mark ]] ||
  fail "the mark is not a file after the stuck renewal"
check_log "$name"
figure "after the stuck renewal: 101,000 ids distinct, minting went on"
