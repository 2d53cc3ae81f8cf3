"""docs/clients.md, psycopg 3: every way of inserting rows gives back the rows' ids,
distinct and rising in row order within a statement and across a session's statements;
snowflake_parse(id) arrives as a string until its composite type is registered."""

from datetime import datetime

from psycopg.types.composite import CompositeInfo, register_composite

from common import check, connect, rising, run, same_ids

ITEMS = [f"item {n}" for n in range(500)]
conn = connect()
conn.execute("DROP TABLE IF EXISTS pg3_orders")
conn.execute("CREATE TABLE pg3_orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text UNIQUE)")
session_ids = []  # every id this connection got back, in the order it got them


def returning_one_row():
    """psycopg: INSERT ... RETURNING id, row by row"""
    got = {}
    for item in ITEMS[:50]:
        got[item] = conn.execute("INSERT INTO pg3_orders (item) VALUES (%s) RETURNING id", [item]).fetchone()[0]
    check(all(isinstance(id_, int) for id_ in got.values()), "ids are not Python ints")
    same_ids("pg3_orders", got, "50 single-row INSERTs")
    rising(list(got.values()), "50 single-row INSERTs")
    session_ids.extend(got.values())
    return "50 ids, each its row's, rising from statement to statement"


def given_order(rows, items, what):
    """rows ((item, id), as the client got them) are items' rows in the order given, each
    id its row's, rising; their ids join the session's."""
    check([item for item, _ in rows] == items, f"{what}: the rows came back in another order than given")
    same_ids("pg3_orders", dict(rows), what)
    rising([id_ for _, id_ in rows], what)
    session_ids.extend(id_ for _, id_ in rows)


def one_statement_many_rows():
    """psycopg: one INSERT ... SELECT FROM unnest(%s) WITH ORDINALITY ... RETURNING"""
    items = ITEMS[50:250]
    rows = conn.execute(
        """INSERT INTO pg3_orders (item)
           SELECT item FROM unnest(%s::text[]) WITH ORDINALITY AS given(item, n) ORDER BY n
           RETURNING item, id""", [items]).fetchall()
    given_order(rows, items, "one INSERT of 200 rows")
    return "200 ids in one statement, each its row's, rising in row order"


def executemany_returning():
    """psycopg: executemany(..., returning=True)"""
    items = ITEMS[250:450]
    cur = conn.cursor()
    cur.executemany("INSERT INTO pg3_orders (item) VALUES (%s) RETURNING item, id",
                    [[item] for item in items], returning=True)
    given_order([cur.fetchone() for _ in cur.results()], items, "executemany of 200 rows")
    return "200 ids, one per statement of the batch, each its row's, rising"


def copy_in_input_order():
    """psycopg: COPY FROM STDIN"""
    items = ITEMS[450:]
    with conn.cursor().copy("COPY pg3_orders (item) FROM STDIN") as copy:
        for item in items:
            copy.write_row([item])
    rows = conn.execute("SELECT item, id FROM pg3_orders WHERE item = ANY(%s) ORDER BY id", [items]).fetchall()
    check([item for item, _ in rows] == items, "COPY's rows, ordered by id, are not in input order")
    session_ids.extend(id_ for _, id_ in rows)
    rising(session_ids, "every id of the session")
    return f"{len(items)} rows, their ids rising in input order; the session's {len(session_ids)} ids rise"


def parse_composite():
    """psycopg: snowflake_parse(id) as a string, then registered"""
    query = "SELECT id, snowflake_parse(id), (snowflake_parse(id)).ts FROM pg3_orders LIMIT 1"
    with connect() as fresh:
        _, parts, ts = fresh.execute(query).fetchone()
        check(isinstance(parts, str), f"snowflake_parse(id) arrived as {type(parts).__name__}, not str")
        register_composite(CompositeInfo.fetch(fresh, "snowflake_parts"), fresh)
        _, typed, _ = fresh.execute(query).fetchone()
    check(isinstance(typed.ts, datetime) and typed.ts == ts, f"registered: ts is {typed.ts!r}, not {ts!r}")
    check(isinstance(typed.node_id, int) and isinstance(typed.sequence, int), "registered: parts are not ints")
    return f"{parts!r} until CompositeInfo.fetch and register_composite, then {type(typed).__name__}(ts=..., ...)"


run([returning_one_row, one_statement_many_rows, executemany_returning, copy_in_input_order, parse_composite])
