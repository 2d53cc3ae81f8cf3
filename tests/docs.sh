#!/usr/bin/env bash
# The doc test. First, with no server, what README.md, SECURITY.md and docs/*.md cite of
# this tree: every path of it they name in code or link to is there, and every version
# they give of the extension or pgrx is Cargo.toml's or an earlier release's
# (tests/docs/references.py, which says where it looks), and every figure of a block they
# mark as quoted from benchmark reports (<!-- figures: bench/results/... -->) is in those
# reports (tests/docs/figures.py). Then every ```sql block of
# README.md and docs/*.md run as written on real servers, what psql prints compared with
# the output each shows, and the README's function and settings tables checked against
# pg_proc and pg_settings (tests/docs/check.py, which says how, and why in Python). Two
# servers, both in UTC with English messages, the time zone and language of the output
# the docs show: `stock`, a server with no configuration, where a block runs unless its
# doctest comment names another, and `preload`, which preloads the library with the gene
# layout of the README's gene example, so that pg_settings lists every snowflake.*
# setting too.
# Usage: bash tests/docs.sh 15|16|17|18   (extension installed; pg_partman for its recipe)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
version=${1:?usage: docs.sh 15|16|17|18}
pg_major "$version" >/dev/null
cd "$SNOWFLAKE_PG_ROOT"
python3 -B tests/docs/references.py README.md SECURITY.md docs/*.md
python3 -B tests/docs/figures.py README.md SECURITY.md docs/*.md
stock=docs$version preload=docs$version-preload
trap 'cluster_stop "$stock"; cluster_stop "$preload"' EXIT
display=(timezone=UTC lc_messages=C)
cluster_start "$stock" "$version" $((5500 + version)) "${display[@]}"
cluster_start "$preload" "$version" $((5520 + version)) "${display[@]}" shared_preload_libraries=snowflake_pg \
  "snowflake.layout='time:41, node:2, slot:8, sequence:8, gene:4'"

python3 -B tests/docs/check.py --psql "$(pg_bin_of "$version")/psql" \
  --server "stock=$(cluster_dir "$stock"):$(cluster_port "$stock")" \
  --server "preload=$(cluster_dir "$preload"):$(cluster_port "$preload")" \
  README.md docs/*.md
