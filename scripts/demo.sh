#!/usr/bin/env bash
# The main job: set the machine up, build snowflake_pg, install it into PostgreSQL 15,
# start a local server and show the four functions at work. The server keeps running
# afterwards for you to try things; the last lines say how to connect and stop it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$here/setup.sh"
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"

version=${PG_VERSION:-15} name=demo port=5415
echo "== build and install into PostgreSQL $version"
install_extension "$version"
echo "== start a server in $CLUSTERS_DIR/$name"
cluster_start "$name" "$version" "$port"
cluster_psql "$name" --echo-all -f "$here/demo.sql"

cat <<INFO

The server is still running. Connect with:
  $(pg_bin_of "$version")/psql -h $CLUSTERS_DIR/$name -p $port -U postgres
Stop it with:
  runuser -u postgres -- $(pg_bin_of "$version")/pg_ctl -D $CLUSTERS_DIR/$name/data stop
INFO
