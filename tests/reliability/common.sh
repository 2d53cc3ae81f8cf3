# shellcheck shell=bash disable=SC2034 # port_base and minted_table are for the scenarios
# Shared by the reliability scenarios: their servers, their checks and their figures.
# A scenario is `bash tests/reliability/NN-name.sh 15|16|17|18|19`, with the extension
# installed, run where that PostgreSQL runs (19: in the build root); it prints what it
# checked and exits non-zero on the first failed check.

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
version=${1:?usage: $0 15|16|17|18|19}
scenario=$(basename "$0" .sh)
# 100 ports per PostgreSQL version from its base in scripts/lib.sh (6200 for 15, 6300 for 16,
# 6400 for 17, 6500 for 18, 6800 for 19); a scenario adds offsets of its own, from 0 to 99,
# that no other scenario takes: two scenarios may run at once.
port_base=$(pg_port_base "$version") || exit 2
# The figures of every scenario of a run, for docs/reliability.md.
report=${RELIABILITY_REPORT:-$SNOWFLAKE_PG_ROOT/target/reliability-pg$version.txt}
mkdir -p "$(dirname "$report")"

# On an emulated server (emulated.sh), several times slower to start a backend and to mint,
# a scenario keeps its checks of what must hold and scales those of how much a server does
# in a given time, saying where.
emulated=${RELIABILITY_EMULATED:-false}

servers=()
stop_servers() {
  local name
  for name in "${servers[@]}"; do cluster_stop "$name" 2>/dev/null || true; done
}
trap stop_servers EXIT

# start NAME PORT [setting=value ...]: a fresh server. Verbose errors put the SQLSTATE in
# the log, which is how an internal error (XX000, what a Rust panic would become) shows.
# With RELIABILITY_LAYOUT (see run.sh), the server preloads the library with that layout.
start() {
  local name=$1 port=$2 layout=(); shift 2
  servers+=("$name")
  if [[ -n ${RELIABILITY_LAYOUT:-} ]]; then
    layout=(shared_preload_libraries=snowflake_pg "snowflake.layout='$RELIABILITY_LAYOUT'")
  fi
  cluster_start "$name" "$version" "$port" log_error_verbosity=verbose "${layout[@]}" "$@"
}

# fail TEXT: the check failed. To stderr, so that a failure inside $(...) is not swallowed.
fail() { echo "FAIL $scenario: $*" >&2; exit 1; }

# --- Servers under a faked clock (libfaketime under the postmaster): every backend's clock
# moves at once when the offset in the file $CLUSTERS_DIR/NAME.offset changes. The library
# is the servers' own architecture's (server_faketime_lib).
faketime_lib=$(server_faketime_lib)

# faked NAME COMMAND...: runs COMMAND (which starts server NAME) with the server's clock
# faked, at the offset of the file, +0 when there is none yet.
faked() {
  local name=$1 offset=$CLUSTERS_DIR/$1.offset; shift
  [[ -n $faketime_lib ]] || fail "libfaketime is not installed where the servers run (scripts/setup-tests.sh installs it)"
  mkdir -p "$CLUSTERS_DIR"
  [[ -f $offset ]] || { echo +0 >"$offset" && chmod 644 "$offset"; }
  CLUSTER_ENV="LD_PRELOAD=$faketime_lib FAKETIME_TIMESTAMP_FILE=$offset FAKETIME_NO_CACHE=1" "$@"
}
# start_faked NAME PORT [settings...]: a fresh server with its clock at real time. Autovacuum
# off: its workers would take backend slots between the scenario's own connections.
start_faked() {
  rm -f "$CLUSTERS_DIR/$1.offset"
  faked "$1" start "$@" autovacuum=off
}
# step NAME OFFSET: sets the clock of server NAME to real time + OFFSET seconds. The file
# is replaced, never rewritten, so no backend ever reads half an offset.
step() { echo "$2" >"$CLUSTERS_DIR/$1.offset.new" && mv -f "$CLUSTERS_DIR/$1.offset.new" "$CLUSTERS_DIR/$1.offset"; }

# figure TEXT: a result worth keeping, printed and added to the report.
figure() {
  echo "  $*"
  echo "$scenario: $*" >>"$report"
}

# check_log NAME: no crash, assertion, PANIC, internal error or Rust panic in the log.
# A SIGKILL that a scenario sends itself is not a crash of ours, so signal 9 is allowed.
check_log() {
  local log=$CLUSTERS_DIR/$1/server.log bad
  bad=$(grep -E "PANIC|TRAP:|terminated by signal (6|11)|[Ss]egmentation|Aborted|$INTERNAL_ERROR_RE|panicked" "$log" |
    head -5) || true
  [[ -z $bad ]] || fail "the server log of $1 shows: $bad"
}

# expect_error NAME QUERY PATTERN [psql args...]: QUERY (and any further -c) fails with an
# error whose verbose report, on one line, matches PATTERN; counted in $checked.
checked=0
expect_error() {
  local out
  out=$(sql "$1" "$2" "${@:4}" -v VERBOSITY=verbose 2>&1) && fail "no error for: $2"
  grep -qE -e "$3" <<<"${out//$'\n'/ }" || fail "for $2, expected /$3/, got: $out"
  checked=$((checked + 1))
}

# check_distinct NAME TABLE: every id of TABLE.id is distinct; prints the row count.
check_distinct() {
  local counts rows distinct
  counts=$(sql "$1" "SELECT count(*), count(DISTINCT id) FROM $2")
  IFS='|' read -r rows distinct <<<"$counts"
  [[ $rows == "$distinct" ]] || fail "$2 holds $rows ids but only $distinct distinct ones"
  echo "$rows"
}

# check_increasing NAME TABLE: within each backend (column pid), the generator's
# (ts, sequence) strictly increases in the order ids were minted (column n, a bigserial
# filled in the same row). The worker id in between is left out: it changes with
# snowflake.node_id, which a session may SET.
check_increasing() {
  local backwards
  backwards=$(sql "$1" "SELECT count(*) FROM (SELECT (p.ts, p.sequence)
      <= (lag(p.ts) OVER w, lag(p.sequence) OVER w) AS back
    FROM $2 t, snowflake_parse(t.id) p WINDOW w AS (PARTITION BY t.pid ORDER BY t.n)) s WHERE back")
  [[ $backwards == 0 ]] || fail "$backwards ids of $2 do not follow their backend's previous one"
}

# The table most scenarios mint into: the primary key rejects any duplicate.
minted_table="CREATE TABLE minted (id bigint PRIMARY KEY DEFAULT snowflake_next(),
  n bigserial, pid int NOT NULL DEFAULT pg_backend_pid())"

quiesce() { # NAME: no client session left but the one asking, then a margin for exits
  until [[ $(sql "$1" "SELECT count(*) FROM pg_stat_activity
      WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()") == 0 ]]; do
    sleep 0.1
  done
  sleep 0.3
}

# in_slot NAME SLOT SCRIPT: runs the psql SCRIPT in a new session that holds backend
# slot SLOT, errors included in the output. PostgreSQL 15 and 16 give a new session the
# lowest free slot, so once the server is quiet the first try gets the slot its last session
# freed; from 17 on, freed slots are handed out in turn, so it reconnects until it gets
# SLOT (asking pg_stat_get_backend_idset(), which numbers sessions by slot there).
in_slot() {
  local name=$1 slot=$2 script=$3 out
  local psql=(cluster_psql "$name" -qAt -v ON_ERROR_STOP=0 -v VERBOSITY=verbose)
  if ((version < 17)); then
    quiesce "$name"
    "${psql[@]}" <<<"$script" 2>&1
    return
  fi
  for _ in $(seq 2000); do
    out=$("${psql[@]}" 2>&1 <<SQL
SELECT s = $slot AS mine FROM pg_stat_get_backend_idset() s
  WHERE pg_stat_get_backend_pid(s) = pg_backend_pid() \gset
\if :mine
\echo in-slot
$script
\endif
SQL
    )
    if [[ $out == in-slot* ]]; then
      echo "${out#in-slot$'\n'}"
      return
    fi
  done
  fail "no session got backend slot $slot"
}

# --- Citus clusters on this machine (scripts/setup-tests.sh builds into each major the Citus
# release that supports it, citus_version_of, where ../shared/citus is beside the clone and
# where it loads).
# Citus nodes talk to each other over TCP, so these servers listen on 127.0.0.1, where
# initdb's trust lets them in.

# citus_lib: where Citus's library is for this scenario's PostgreSQL.
citus_lib() { echo "$("$(pg_config_of "$version")" --pkglibdir)/citus.so"; }

# citus_node NAME PORT [setting=value ...]: a fresh server preloading Citus (which must
# come first) and the extension, with logical WAL so that its shards can move, and
# Citus created in its database.
citus_node() {
  local name=$1 port=$2; shift 2
  start "$name" "$port" "shared_preload_libraries='citus,snowflake_pg'" \
    listen_addresses=127.0.0.1 wal_level=logical "$@"
  sql "$name" "CREATE EXTENSION citus"
}

# citus_add_worker COORDINATOR WORKER: joins running citus_node WORKER to the cluster of
# COORDINATOR, which gives it the next group id and syncs the metadata to it.
citus_add_worker() {
  sql "$1" "SELECT citus_add_node('127.0.0.1', $(cluster_port "$2"))" >/dev/null
}

# citus_cluster PREFIX PORT WORKERS [setting=value ...]: a coordinator PREFIX-coordinator
# on PORT (group 0) and workers PREFIX-worker1 to PREFIX-workerN on the ports after it
# (groups 1 to N, in that order), every node a citus_node with the settings.
citus_cluster() {
  local prefix=$1 port=$2 workers=$3 i; shift 3
  citus_node "$prefix-coordinator" "$port" "$@"
  sql "$prefix-coordinator" "SELECT citus_set_coordinator_host('127.0.0.1', $port)" >/dev/null
  for ((i = 1; i <= workers; i++)); do
    citus_node "$prefix-worker$i" $((port + i)) "$@"
    citus_add_worker "$prefix-coordinator" "$prefix-worker$i"
  done
}

# --- Logical replication between a scenario's servers. Such a server is started with
# log_line_prefix '%m [%p] %b ', so that a line of its log names the process it is from:
# an apply or table synchronization worker is a "logical replication ... worker".

# eventually TEXT COMMAND...: polls COMMAND until it succeeds. A guard against a step that
# hangs, not a measure: it fails with TEXT after $EVENTUALLY_SECONDS (300 by default).
eventually() {
  local text=$1 deadline=$((SECONDS + ${EVENTUALLY_SECONDS:-300})); shift
  until "$@"; do
    ((SECONDS < deadline)) || fail "$text, after ${EVENTUALLY_SECONDS:-300} s"
    sleep 0.1
  done
}

# replication_errors NAME: the errors of NAME's logical replication workers, from its log.
replication_errors() { grep -E 'logical replication [a-z ]*worker ERROR:' "$CLUSTERS_DIR/$1/server.log"; }

# subscription_stats NAME: the errors and conflicts that NAME's subscriptions counted, in
# total: apply_error_count and sync_error_count, and from PostgreSQL 18 on the conflict
# counts by kind (confl_insert_exists and the others), summed from whatever columns the
# version has.
subscription_stats() {
  sql "$1" "SELECT coalesce(sum(value::bigint), 0)
    FROM pg_stat_subscription_stats s, json_each_text(row_to_json(s))
    WHERE key IN ('apply_error_count', 'sync_error_count') OR key LIKE 'confl\_%'"
}

# caught_up SUBSCRIBER SUBSCRIPTION PUBLISHER LSN: SUBSCRIPTION of SUBSCRIBER has copied
# its tables and applied PUBLISHER's changes up to LSN (what PostgreSQL's own tests wait
# for). A replication error on SUBSCRIBER fails at once rather than waiting.
caught_up() {
  local errors
  if errors=$(replication_errors "$1"); then fail "replication into $1 failed: $errors"; fi
  [[ $(sql "$1" "SELECT count(*) FROM pg_subscription_rel r JOIN pg_subscription s
      ON s.oid = r.srsubid WHERE s.subname = '$2' AND r.srsubstate <> 'r'") == 0 &&
    $(sql "$3" "SELECT coalesce(bool_and(replay_lsn >= '$4'), false) FROM pg_stat_replication
      WHERE application_name = '$2'") == t ]]
}

# subscription SUBSCRIBER PUBLISHER: the name of SUBSCRIBER's subscription to PUBLISHER,
# which is also its slot's on PUBLISHER: "SUBSCRIBER_from_PUBLISHER", unique on both.
subscription() { local name=${1}_from_$2; echo "${name//[^a-z0-9_]/_}"; }

# replicated SUBSCRIBER PUBLISHER: waits until SUBSCRIBER's subscription to PUBLISHER has
# applied everything PUBLISHER had written when called.
replicated() {
  local lsn
  lsn=$(sql "$2" "SELECT pg_current_wal_lsn()")
  eventually "$1 has not caught up with $2" caught_up "$1" "$(subscription "$1" "$2")" "$2" "$lsn"
}

# subscribe SUBSCRIBER PUBLISHER PUBLICATION [OPTIONS]: SUBSCRIBER subscribes to
# PUBLICATION of PUBLISHER, WITH (OPTIONS) if given, and has copied its tables.
subscribe() {
  sql "$1" "SET client_min_messages = warning" -c "CREATE SUBSCRIPTION $(subscription "$1" "$2")
    CONNECTION '$(cluster_conninfo "$2")' PUBLICATION $3 ${4:+WITH ($4)}"
  replicated "$1" "$2"
}
