#!/usr/bin/env bash
# Installs what tests/operations.sh needs on Debian 12, as root, skipping what is already
# there: Debian's prometheus-postgres-exporter (the exporter the queries file in
# ops/postgres_exporter is written for), prometheus (for promtool, which checks and tests
# the rules of ops/prometheus), curl (the scrapes) and python3-yaml (which builds the
# rules' test from them). Safe to run again, and quick then. Installing them may start
# Debian's own exporter (port 9187) and Prometheus (port 9090): the test runs exporters of
# its own and no Prometheus, so those, started by this run's apt-get, are stopped; any
# service this run did not start is left alone.
set -euo pipefail
say() { printf '== setup-operations: %s\n' "$*"; }

packages=(prometheus-postgres-exporter prometheus curl python3-yaml)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0
say "apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
for service in prometheus-postgres-exporter prometheus; do
  [[ " ${missing[*]} " == *" $service "* ]] || continue
  if invoke-rc.d "$service" status >/dev/null 2>&1; then
    say "stopping the $service that installing it started"
    invoke-rc.d "$service" stop || true
  fi
done
