#!/usr/bin/env bash
# Operations (issue 30): the real postgres_exporter, with ops/postgres_exporter/snowflake.yaml,
# against test servers of its own, and the alert rules of ops/prometheus on what it scraped.
# Server a preloads the library, its clock under libfaketime, with a layout whose time field
# ends in 2030 (37 bits of ms from 2026), 8 slots and 32 ids a ms, and a 100 ms lead bound;
# server b is stock, with the default layout, and holds the SQL edition in a database of
# its own. Each condition is brought about for real on a and seen in a scrape of /metrics:
# another server's claim of the node id (b's row, copied as a restore would), the slots all
# held by sessions, a burst that waits for spent ticks, a clock step back past the bound,
# a renewal of the high-water mark that cannot write its file, and the WARNING at start
# that the epoch ends in fewer than five years. Server b's clock is under libfaketime too:
# each condition but the high-water mark's (the SQL edition has none) is brought about
# again on its SQL edition, configured as a is, and seen in the scrapes of an exporter of
# its own, with the edition's warning that the epoch ends. Then `promtool check rules`,
# and `promtool test rules` on series made of the values scraped before and after each
# condition, for either edition.
# Needs scripts/setup-operations.sh. Usage: bash tests/operations.sh 15|16|17|18
set -euo pipefail
# shellcheck source=tests/reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/reliability/common.sh"
started=$SECONDS
queries=$SNOWFLAKE_PG_ROOT/ops/postgres_exporter/snowflake.yaml
rules=$SNOWFLAKE_PG_ROOT/ops/prometheus/snowflake-alerts.yml
for tool in prometheus-postgres-exporter promtool curl python3; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (bash scripts/setup-operations.sh)"
done
python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml is not installed (bash scripts/setup-operations.sh)"
# Ports: servers 6700-6799 and exporters 9700-9799, 10 apart per major.
a=ops$version-a b=ops$version-b
a_port=$((6700 + (version - 15) * 10)) b_port=$((6701 + (version - 15) * 10))
ex_a=$((9700 + (version - 15) * 10)) ex_b=$((ex_a + 1)) ex_sql=$((ex_a + 2))
work=$CLUSTERS_DIR/ops$version
rm -rf "$work" && mkdir -p "$work"

exporters=()
stop_all() {
  local pid
  for pid in "${exporters[@]}"; do kill "$pid" 2>/dev/null || true; done
  stop_servers
}
trap stop_all EXIT

# exporter PORT NAME DATABASE: postgres_exporter on 127.0.0.1:PORT for DATABASE of cluster
# NAME, with the queries file alone (PostgreSQL's own metrics off: a short scrape).
exporter() {
  local port=$1 name=$2 db=$3 i
  DATA_SOURCE_NAME="host=$CLUSTERS_DIR/$name port=$(cluster_port "$name") user=postgres dbname=$db sslmode=disable" \
    prometheus-postgres-exporter --web.listen-address="127.0.0.1:$port" --extend.query-path="$queries" \
    --disable-default-metrics --disable-settings-metrics >"$work/exporter-$port.log" 2>&1 &
  exporters+=($!)
  for ((i = 0; i < 100; i++)); do
    curl -sf "http://127.0.0.1:$port/metrics" >/dev/null && return 0
    sleep 0.1
  done
  cat "$work/exporter-$port.log" >&2
  fail "the exporter on port $port did not answer"
}

# scrape PORT NAME: /metrics of the exporter on PORT, its snowflake_* lines kept in
# $work/NAME.prom; the exporter must have read the view (snowflake_slots is there).
scrape() {
  curl -sf "http://127.0.0.1:$1/metrics" | grep '^snowflake_' >"$work/$2.prom" || true
  grep -q '^snowflake_slots{' "$work/$2.prom" ||
    fail "scrape $2: no snowflake_slots: $(curl -sf "http://127.0.0.1:$1/metrics" | grep -i -e snowflake -e error | head -5)"
}

# value NAME METRIC: the value of METRIC in scrape NAME.
value() { awk -v m="$2" 'index($0, m "{") == 1 { print $NF }' "$work/$1.prom"; }

# --- The servers --------------------------------------------------------------------------
start_faked "$b" "$b_port" cluster_name="$b"
sql "$b" "CREATE EXTENSION snowflake_pg" -c "SELECT snowflake_next() > 0" >/dev/null
start_faked "$a" "$a_port" shared_preload_libraries=snowflake_pg cluster_name="$a" \
  "snowflake.layout='time:37, node:8, slot:3, sequence:5'" "snowflake.epoch='2026-01-01'" \
  snowflake.max_lead_ms=100
start_day=$(date -u +%s) && start_day=$((start_day / 86400))
sql "$a" "CREATE EXTENSION snowflake_pg"
log_a=$CLUSTERS_DIR/$a/server.log
warning='WARNING:  01000: snowflake_pg: the time field of the layout runs out at 2030-05-10 17:29:13.472+00, in [0-9]* days: no id can be minted after it'
grep -q "$warning" "$log_a" || fail "no WARNING at start that the epoch ends: $(grep -i -A3 warning "$log_a" | head)"
grep -A3 "$warning" "$log_a" | grep -q 'HINT:  Plan the move before then' || fail "the WARNING names no remedy"
if grep -q 'the time field of the layout runs out' "$CLUSTERS_DIR/$b/server.log"; then
  fail "server b (default layout, ends 2089) warned"
fi
echo "ok the WARNING at start on a server whose epoch ends in 2030, none on one that ends in 2089"

exporter "$ex_a" "$a" postgres
exporter "$ex_b" "$b" postgres
scrape "$ex_a" a-start
scrape "$ex_b" b-start
while read -r metric; do
  [[ $metric == node_id || $metric == layout ]] && continue
  [[ -n $(value a-start "snowflake_$metric") ]] || fail "metric snowflake_$metric is missing from the scrape"
done < <(sed -n 's/^    - \([a-z_]*\):$/\1/p' "$queries")
grep -q '^# HELP snowflake_clock_steps_refused_total Calls refused' <(curl -sf "http://127.0.0.1:$ex_a/metrics") ||
  fail "no help text for snowflake_clock_steps_refused_total"
left=$(value a-start snowflake_epoch_seconds_left)
python3 -c "import sys; sys.exit(not 0 < float('$left') < 157788000)" || fail "epoch_seconds_left $left, not within five years"
echo "ok the exporter scrapes every metric of the queries file, with help; epoch_seconds_left $left"

# --- A node id claimed by another server ---------------------------------------------------
# b claimed node 0 in its snowflake_nodes; its row comes to a as a restore of b's dump would.
sql "$b" "COPY snowflake_nodes TO STDOUT" | cluster_psql "$a" -q -c "COPY snowflake_nodes FROM STDIN"
out=$(sql "$a" "SELECT snowflake_next()" 2>&1) && fail "a minted under b's claim: $out"
[[ $out == *"node id 0"* ]] || fail "a's mint under b's claim: $out"
scrape "$ex_a" a-claim
[[ $(value a-claim snowflake_node_claimed_by_other) == 1 ]] || fail "node_claimed_by_other after b's claim: $(value a-claim snowflake_node_claimed_by_other)"
sql "$a" "SELECT snowflake_release_node(0)" >/dev/null
echo "ok another server's claim: a's mint refused, snowflake_node_claimed_by_other 1"

# --- Every slot held ------------------------------------------------------------------------
# hold_all_slots NAME DB EXPORTER SCRAPE: 8 sessions (the layout's 3 slot bits) of database
# DB of cluster NAME each mint, then wait for the file go.SCRAPE; scrape SCRAPE meanwhile,
# and wait for the slots to be free again (the exporter's session holds none).
hold_all_slots() {
  local name=$1 db=$2 exporter=$3 tag=$4 pids=() i
  for ((i = 1; i <= 8; i++)); do
    cluster_psql "$name" -d "$db" -qAt >"$work/$tag.$i.out" 2>&1 <<SQL &
SELECT snowflake_next() > 0;
\\! touch $work/$tag.held.$i; until [ -e $work/go.$tag ]; do sleep 0.05; done
SQL
    pids+=($!)
  done
  all_held() { [[ $(find "$work" -name "$tag.held.*" | wc -l) == 8 ]]; }
  eventually "the 8 sessions did not mint" all_held
  scrape "$exporter" "$tag"
  touch "$work/go.$tag"
  for i in "${pids[@]}"; do wait "$i" || fail "a session holding a slot failed: $(cat "$work/$tag".*.out)"; done
  [[ "$(value "$tag" snowflake_backends_minting) $(value "$tag" snowflake_slots)" == "8 8" ]] ||
    fail "slots held: $(value "$tag" snowflake_backends_minting) of $(value "$tag" snowflake_slots)"
  slots_free() { [[ $(sql "$name" "SELECT backends_minting FROM snowflake_status" -d "$db") == 0 ]]; }
  eventually "the slots were not freed" slots_free
}
hold_all_slots "$a" postgres "$ex_a" a-slots
echo "ok 8 sessions minting: snowflake_backends_minting 8 of snowflake_slots 8"

# --- A burst past the lead bound -------------------------------------------------------------
# 20,000 ids at 32 a ms: 625 ms of ticks, of which 100 ms may be borrowed ahead.
sql "$a" "SELECT count(DISTINCT snowflake_next()) FROM generate_series(1, 20000)" >/dev/null
scrape "$ex_a" a-burst
waits=$(value a-burst snowflake_spent_tick_waits_total)
((waits > 60)) || fail "a burst of 20,000 ids waited for $waits spent ticks"
echo "ok a burst of 20,000 ids: snowflake_spent_tick_waits_total $waits"

# --- A clock step back past the bound ------------------------------------------------------
# step_back NAME DB: a session of database DB of cluster NAME mints, the server's clock
# steps back 3 s (past the lead bound) and the session's next id is refused; the clock is
# set right again.
step_back() {
  local out
  out=$(cluster_psql "$1" -d "$2" -qAt -v ON_ERROR_STOP=0 -v VERBOSITY=verbose 2>&1 <<SQL
SELECT snowflake_next() > 0;
\\! echo -3 >$CLUSTERS_DIR/$1.offset.new && mv -f $CLUSTERS_DIR/$1.offset.new $CLUSTERS_DIR/$1.offset
SELECT snowflake_next();
\\! echo +0 >$CLUSTERS_DIR/$1.offset.new && mv -f $CLUSTERS_DIR/$1.offset.new $CLUSTERS_DIR/$1.offset
SQL
  )
  [[ $out == *"ERROR:  55000: the system clock is "*" ms behind the last snowflake id"* ]] || fail "the step back was not refused: $out"
}
step_back "$a" postgres
scrape "$ex_a" a-step
[[ $(value a-step snowflake_clock_steps_refused_total) -ge 1 ]] || fail "clock_steps_refused after a refused step: $(value a-step snowflake_clock_steps_refused_total)"
echo "ok a clock step back of 3 s (bound 100 ms): refused, snowflake_clock_steps_refused_total $(value a-step snowflake_clock_steps_refused_total)"

# --- A renewal of the high-water mark that cannot write ------------------------------------
# A directory where the mark's temporary file goes: the write fails whoever runs it, and
# minting stops once the reservation is spent (within a second).
blocker=$CLUSTERS_DIR/$a/data/pg_snowflake/high_water_mark.tmp
mkdir "$blocker"
out=$(sql "$a" "SELECT snowflake_next(), pg_sleep(0.05) FROM generate_series(1, 100)" 2>&1) &&
  { rmdir "$blocker"; fail "minting went on with an unwritable mark"; }
rmdir "$blocker"
[[ $out == *"could not move the snowflake_pg high-water mark ahead"* ]] || fail "the unwritable mark: $out"
sql "$a" "SELECT snowflake_next() > 0" >/dev/null || fail "no id once the mark could be written again"
scrape "$ex_a" a-renew
failed=$(value a-renew snowflake_high_water_mark_renewals_failed_total)
((failed >= 1)) || fail "renewals_failed after an unwritable mark: $failed"
echo "ok an unwritable mark file: minting refused, snowflake_high_water_mark_renewals_failed_total $failed"

# Reading the view on the day of the start gave no second warning (one a day: one more for
# each midnight UTC the run crossed).
end_day=$(date -u +%s) && end_day=$((end_day / 86400))
warnings=$(grep -c 'the time field of the layout runs out' "$log_a") || true
((warnings == 1 + end_day - start_day)) || fail "$warnings warnings in the log in $((end_day - start_day + 1)) days"
check_log "$a"
check_log "$b"

# --- The SQL edition: the same metrics, and the conditions again ----------------------------
# A database of b holds the SQL edition, configured as a is (node 0, the layout that ends
# in 2030) but with a lead bound of 0: a call in PL/pgSQL takes microseconds where the
# native's takes a fraction of one, and on a loaded machine a burst might not outrun a
# bound of 100 ms; with none, every tick whose 32 ids are spent before the clock leaves
# it is waited out. An exporter of its own scrapes it.
sql_edition=$work/sql_edition
bash "$SNOWFLAKE_PG_ROOT/sql_edition/build.sh" "$sql_edition" >/dev/null
edition_script=$(find "$sql_edition" -name 'snowflake_sql--*.sql' ! -name '*pg_tle*' | head -1)
sql "$b" "CREATE DATABASE sqled" -c "ALTER DATABASE sqled SET search_path = snowflake, public"
cluster_psql "$b" -q -d sqled -v schema=snowflake -f "$edition_script" >/dev/null
sql "$b" "SELECT snowflake.snowflake_configure(node_id => 0, layout => 'time:37, node:8, slot:3, sequence:5',
  epoch => '2026-01-01', max_lead_ms => 0)" -d sqled >/dev/null
# The edition's warning that the epoch ends: to a session that mints, and in the log.
edition_warning='WARNING:  01000: snowflake_sql: the time field of the layout runs out at 2030-05-10 17:29:13.472+00, in [0-9]* days: no id can be minted after it'
out=$(sql "$b" "SELECT snowflake_next() > 0" -d sqled -v VERBOSITY=verbose 2>&1)
grep -q "$edition_warning" <<<"$out" || fail "no warning that the epoch ends to a session minting with the SQL edition: $out"
grep -A3 "$edition_warning" "$CLUSTERS_DIR/$b/server.log" | grep -q 'HINT:  Plan the move before then' ||
  fail "no warning that the epoch ends, with its remedy, in b's log: $(grep -A3 snowflake_sql "$CLUSTERS_DIR/$b/server.log" | head)"
exporter "$ex_sql" "$b" sqled
scrape "$ex_sql" sqled-start
names() { sed 's/{.*//' "$work/$1.prom" | sort -u; }
[[ $(names sqled-start) == "$(names a-start)" ]] || fail "the SQL edition's metric names differ: $(diff <(names a-start) <(names sqled-start))"
# Counted from the install: nothing yet but the one session that minted. No high-water mark.
figures=$(for metric in clock_steps_absorbed_total clock_steps_refused_total spent_tick_waits_total furthest_lead_seconds \
  backends_minting_max high_water_mark_renewals_failed_total high_water_mark_renewed_timestamp_seconds node_claimed; do
  value sqled-start "snowflake_$metric"
done | tr '\n' ' ')
[[ $figures == "0 0 0 0 1 NaN NaN 1 " ]] || fail "the SQL edition's figures at the start: $figures"
echo "ok the SQL edition: the same $(names sqled-start | wc -l) metric names, every counter counted, NaN only for the high-water mark's renewals"
# Heard: each session that reads the status or mints here would be warned again.
export PGOPTIONS="-c client_min_messages=error"

# a's claim of node 0 in place of the database's own, as a copy of a's claims (a restore,
# or replication) would bring it: the database's mints are refused.
sql "$b" "DELETE FROM snowflake.snowflake_nodes" -d sqled
sql "$a" "COPY (SELECT *, current_database() FROM snowflake_nodes WHERE node_id = 0) TO STDOUT" |
  cluster_psql "$b" -q -d sqled -c "COPY snowflake.snowflake_nodes (node_id, system_identifier, server, layout, epoch, claimed_at, database) FROM STDIN"
out=$(sql "$b" "SELECT snowflake_next()" -d sqled 2>&1) && fail "the SQL edition minted under a's claim: $out"
[[ $out == *"node id 0 is claimed by another server"* ]] || fail "the SQL edition's mint under a's claim: $out"
scrape "$ex_sql" sqled-claim
[[ $(value sqled-claim snowflake_node_claimed_by_other) == 1 ]] ||
  fail "the SQL edition's node_claimed_by_other after a's claim: $(value sqled-claim snowflake_node_claimed_by_other)"
sql "$b" "SELECT snowflake_release_node(0)" -d sqled >/dev/null
echo "ok the SQL edition under another server's claim: its mint refused, snowflake_node_claimed_by_other 1"

hold_all_slots "$b" sqled "$ex_sql" sqled-slots
[[ $(value sqled-slots snowflake_backends_minting_max) == 8 ]] ||
  fail "the SQL edition's backends_minting_max with its 8 slots held: $(value sqled-slots snowflake_backends_minting_max)"
echo "ok the SQL edition, 8 sessions minting: snowflake_backends_minting 8 of snowflake_slots 8, snowflake_backends_minting_max 8"

sql "$b" "SELECT count(DISTINCT snowflake_next()) FROM generate_series(1, 20000)" -d sqled >/dev/null
scrape "$ex_sql" sqled-burst
waits=$(value sqled-burst snowflake_spent_tick_waits_total)
((waits > 60)) || fail "the SQL edition's burst of 20,000 ids waited for $waits spent ticks"
echo "ok the SQL edition, a burst of 20,000 ids: snowflake_spent_tick_waits_total $waits"

step_back "$b" sqled
scrape "$ex_sql" sqled-step
[[ $(value sqled-step snowflake_clock_steps_refused_total) == 1 ]] ||
  fail "the SQL edition's clock_steps_refused after a refused step: $(value sqled-step snowflake_clock_steps_refused_total)"
echo "ok the SQL edition, a clock step back of 3 s (bound 0): refused, snowflake_clock_steps_refused_total 1"
check_log "$b"

# --- The rules -------------------------------------------------------------------------------
promtool check rules "$rules" >/dev/null || fail "promtool check rules: $(promtool check rules "$rules" 2>&1)"
python3 - "$rules" "$work" >"$work/rules-test.yml" <<'PY' || fail "could not build the rules test"
# Series of the scraped values, before and after each condition, one sample a minute; each
# alert checked not firing on the values before and firing on those after.
import re, sys, yaml
rules_file, work = sys.argv[1], sys.argv[2]
rules = {r["alert"]: r for g in yaml.safe_load(open(rules_file))["groups"] for r in g["rules"]}
def scrape(name):
    found = {}
    for line in open(f"{work}/{name}.prom"):
        m = re.match(r'^(\w+)\{(.*)\} (\S+)$', line.strip())
        if m:
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
            found[m.group(1)] = (labels, float(m.group(3)))
    return found
def series(name, metric, values):
    labels, _ = scrape(name)[metric]
    text = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return {"series": f"{metric}{{{text}}}", "values": values}
def num(name, metric):
    return format(scrape(name)[metric][1], "f")
def fired(alert, name, metric):
    labels = dict(scrape(name)[metric][0])
    labels.update(rules[alert].get("labels", {}))
    return [{"exp_labels": labels, "exp_annotations": rules[alert]["annotations"]}]
def step(alert, metric, before, after, quiet_at, fire_at, extra=()):
    inputs = [series(after, metric, f"{num(before, metric)}x5 {num(after, metric)}x25")]
    inputs += [series(after, m, f"{num(after, m)}x30") for m in extra]
    return {"interval": "1m", "input_series": inputs, "alert_rule_test": [
        {"eval_time": quiet_at, "alertname": alert, "exp_alerts": []},
        {"eval_time": fire_at, "alertname": alert, "exp_alerts": fired(alert, after, metric)}]}
def conditions(p):
    """The alerts of either edition on the scrapes named p-start, p-claim and so on."""
    tests = [
        step("SnowflakeNodeClaimedByOther", "snowflake_node_claimed_by_other", f"{p}-start", f"{p}-claim", "3m", "7m"),
        step("SnowflakeSlotsNearlyAllHeld", "snowflake_backends_minting", f"{p}-claim", f"{p}-slots", "4m", "15m",
             extra=["snowflake_slots"]),
        step("SnowflakeClockStepRefused", "snowflake_clock_steps_refused_total", f"{p}-burst", f"{p}-step", "3m", "7m"),
    ]
    # Waits rising: the burst's waits again every minute fire; no new waits do not.
    metric = "snowflake_spent_tick_waits_total"
    before, after = num(f"{p}-slots", metric), num(f"{p}-burst", metric)
    rise = format(float(after) - float(before), "f")
    tests.append({"interval": "1m", "input_series": [series(f"{p}-burst", metric, f"{before}+{rise}x40")],
                  "alert_rule_test": [{"eval_time": "25m", "alertname": "SnowflakeSpentTickWaitsRising",
                                       "exp_alerts": fired("SnowflakeSpentTickWaitsRising", f"{p}-burst", metric)}]})
    tests.append({"interval": "1m", "input_series": [series(f"{p}-burst", metric, f"{after}x40")],
                  "alert_rule_test": [{"eval_time": "25m", "alertname": "SnowflakeSpentTickWaitsRising", "exp_alerts": []}]})
    # The epoch: p's ends in 2030 fires, b's native one (2089) does not.
    metric = "snowflake_epoch_seconds_left"
    tests.append({"interval": "1m", "input_series": [series(f"{p}-start", metric, f"{num(f'{p}-start', metric)}x10"),
                                                     series("b-start", metric, f"{num('b-start', metric)}x10")],
                  "alert_rule_test": [{"eval_time": "5m", "alertname": "SnowflakeEpochEndsWithinFiveYears",
                                       "exp_alerts": fired("SnowflakeEpochEndsWithinFiveYears", f"{p}-start", metric)}]})
    return tests
# The native's on a; the SQL edition's on b's database sqled, which has no high-water mark.
tests = conditions("a") + conditions("sqled") + [
    step("SnowflakeHighWaterMarkRenewalFailing", "snowflake_high_water_mark_renewals_failed_total",
         "a-step", "a-renew", "3m", "7m"),
]
yaml.safe_dump({"rule_files": [rules_file], "evaluation_interval": "1m", "tests": tests}, sys.stdout, sort_keys=False)
PY
promtool test rules "$work/rules-test.yml" >"$work/rules-test.out" 2>&1 ||
  { cat "$work/rules-test.out"; fail "promtool test rules"; }
echo "ok promtool: the rules check, and each of the 6 alerts fires on the scraped values after its condition, not before; the 5 that apply to the SQL edition on its scrapes too ($work/rules-test.yml)"
echo "ok operations (PostgreSQL $version) in $((SECONDS - started)) s"
