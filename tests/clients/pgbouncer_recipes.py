"""docs/clients.md, pgbouncer: psycopg 3 prepares a query on a connection from its 6th
execution on (prepare_threshold=5) and from then on names it; in transaction pooling the
next transaction may run on another server connection, where that name does not exist.
prepare_threshold=None (never prepare) works there; session pooling works with the
defaults. pgbouncer serves the stock server as database "tx" (transaction pooling) and
"session" (session pooling)."""

import psycopg

from common import BOUNCER, Failed, check, connect, distinct, rising, run, same_ids

with connect() as setup:
    setup.execute("DROP TABLE IF EXISTS bouncer_orders")
    setup.execute("CREATE TABLE bouncer_orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text UNIQUE)")


def inserts_while_another_client_holds(label, dbname, **settings):
    """Client A inserts 10 rows one by one; client B then opens a transaction, which holds
    the one server connection A used so far; A inserts 10 more. Returns {item: id} of A's
    rows and the server processes that ran A's INSERTs, or raises what the server said."""
    def bouncer(**extra):
        return psycopg.connect(**BOUNCER, dbname=dbname, **extra)
    got, backends = {}, set()
    with bouncer(autocommit=True, **settings) as a, bouncer() as b:
        for n in range(20):
            if n == 10:
                b.execute("SELECT 1")  # BEGIN, SELECT 1: B keeps its server connection until rollback
            item = f"{label} {n}"
            got[item], backend = a.execute(
                "INSERT INTO bouncer_orders (item) VALUES (%s) RETURNING id, pg_backend_pid()", [item]).fetchone()
            backends.add(backend)
        b.rollback()
    return got, backends


def transaction_pooling_defaults():
    """pgbouncer, transaction pooling, psycopg's defaults: the trap"""
    # First of all: the pool of "tx" has no server connection yet, so B takes the one A used.
    try:
        inserts_while_another_client_holds("tx defaults", "tx")
    except psycopg.errors.InvalidSqlStatementName as error:
        check('prepared statement "_pg3_0" does not exist' in str(error), f"another error: {error}")
        with connect() as reader:
            done = reader.execute("SELECT count(*) FROM bouncer_orders WHERE item LIKE 'tx defaults %'").fetchone()[0]
        check(done == 10, f"{done} INSERTs succeeded, not the 10 before B took A's server connection")
        return f"10 INSERTs, then the first on another server connection failed: {error}"
    raise Failed("every INSERT succeeded: update docs/clients.md (pgbouncer, psycopg's defaults)")


def transaction_pooling_no_prepare():
    """pgbouncer, transaction pooling, prepare_threshold=None"""
    got, backends = inserts_while_another_client_holds("tx unprepared", "tx", prepare_threshold=None)
    check(len(backends) == 2, f"A's INSERTs ran in {len(backends)} server processes, not 2")
    same_ids("bouncer_orders", got, "transaction pooling, prepare_threshold=None")
    # Two server sessions: their ids are ordered to the tick only, so distinct is the promise.
    distinct(list(got.values()), "transaction pooling, prepare_threshold=None")
    return "20 INSERTs on two server connections, each id its row's, distinct"


def session_pooling_defaults():
    """pgbouncer, session pooling, psycopg's defaults"""
    got, backends = inserts_while_another_client_holds("session", "session")
    check(len(backends) == 1, f"A's INSERTs ran in {len(backends)} server processes, not 1")
    same_ids("bouncer_orders", got, "session pooling")
    rising(list(got.values()), "session pooling")
    return "20 INSERTs, the last 15 prepared, all on A's own server connection, each id its row's, rising"


run([transaction_pooling_defaults, transaction_pooling_no_prepare, session_pooling_defaults])
