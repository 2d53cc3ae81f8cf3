#!/usr/bin/env bash
# The recipes of docs/clients.md, run with the real client libraries against real servers:
# psycopg 3, SQLAlchemy 2, Django 5.2, node-postgres 8 and pgjdbc, and psycopg through
# pgbouncer. Each checks that the ids a client gets back are its rows' ids (read back with
# a plain SELECT), distinct, and rising where the README promises it (in row order within
# a statement, across the statements of a session), and that each trap the page names is
# still there. Servers: a stock one on 5560+V (also on 127.0.0.1, for pgjdbc), one that
# preloads the library with the js53 layout on 5580+V (node-postgres' Number parsing), and
# pgbouncer on 5540+V in front of the stock one, database "tx" in transaction pooling and
# "session" in session pooling. The libraries are scripts/setup-tests.sh's: the Python virtual
# environment and npm directory that scripts/lib.sh names, Debian's pgbouncer and pgjdbc.
# Usage: bash tests/clients.sh 15|16|17|18   (extension installed)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
version=${1:?usage: clients.sh 15|16|17|18}
pg_major "$version" >/dev/null
stock=clients$version js53=clients$version-js53 bouncer=clients$version-pgbouncer
port=$((5560 + version)) js53_port=$((5580 + version)) bouncer_port=$((5540 + version))
jdbc_jar=/usr/share/java/postgresql.jar # Debian's libpostgresql-jdbc-java

trap 'pgbouncer_stop "$bouncer"; cluster_stop "$js53"; cluster_stop "$stock"' EXIT
cluster_start "$stock" "$version" "$port" listen_addresses=127.0.0.1
cluster_start "$js53" "$version" "$js53_port" shared_preload_libraries=snowflake_pg snowflake.layout=js53
sql "$stock" "CREATE EXTENSION snowflake_pg"
sql "$js53" "CREATE EXTENSION snowflake_pg"
pgbouncer_start "$bouncer" "$bouncer_port" \
  "tx = host=$CLUSTERS_DIR/$stock port=$port dbname=postgres pool_mode=transaction" \
  "session = host=$CLUSTERS_DIR/$stock port=$port dbname=postgres pool_mode=session"

# The recipes read these: libpq's own variables name the stock server.
export PGHOST=$CLUSTERS_DIR/$stock PGPORT=$port PGUSER=postgres PGDATABASE=postgres
export CLIENTS_JS53_HOST=$CLUSTERS_DIR/$js53 CLIENTS_JS53_PORT=$js53_port
export CLIENTS_BOUNCER_HOST=$CLUSTERS_DIR/$bouncer CLIENTS_BOUNCER_PORT=$bouncer_port
export NODE_PATH=$CLIENTS_NODE/node_modules

cd "$SNOWFLAKE_PG_ROOT/tests/clients"
python=$CLIENTS_VENV/bin/python
echo "versions: $("$python" -c 'import sys, psycopg, sqlalchemy, django
libpq = divmod(psycopg.pq.version(), 10000)
print(f"Python {sys.version.split()[0]}, psycopg {psycopg.__version__} (libpq {libpq[0]}.{libpq[1]}),",
      f"SQLAlchemy {sqlalchemy.__version__}, Django {django.__version__}")'),"
echo "  Node.js $(node --version), pg $(node -p 'require("pg/package.json").version'),"
echo "  $(java -version 2>&1 | head -1), pgjdbc $(dpkg-query -W -f='${Version}' libpostgresql-jdbc-java),"
echo "  $(pgbouncer --version | head -1), $(sql "$stock" "SELECT 'PostgreSQL ' || current_setting('server_version')
  || ', snowflake_pg ' || extversion FROM pg_extension WHERE extname = 'snowflake_pg'")"

failed=0
"$python" psycopg_recipes.py || failed=1
"$python" sqlalchemy_recipes.py || failed=1
"$python" django_recipes.py || failed=1
"$python" pgbouncer_recipes.py || failed=1
node node_postgres_recipes.js || failed=1
java -cp "$jdbc_jar" JdbcRecipes.java || failed=1
exit "$failed"
