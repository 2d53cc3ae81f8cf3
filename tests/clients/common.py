"""What the Python recipes of tests/clients share: the servers tests/clients.sh started,
the checks every recipe makes of the ids it got back, and the runner that prints an
"ok ..." or "FAIL ..." line per recipe.

The stock server is the one of the libpq variables PGHOST, PGPORT, PGUSER and PGDATABASE,
which psycopg reads by itself; pgbouncer is CLIENTS_BOUNCER_HOST and CLIENTS_BOUNCER_PORT.
"""

import os
import sys
import traceback

import psycopg

BOUNCER = {
    "host": os.environ.get("CLIENTS_BOUNCER_HOST", ""),
    "port": os.environ.get("CLIENTS_BOUNCER_PORT", ""),
    "user": os.environ.get("PGUSER", "postgres"),
}


class Failed(Exception):
    """A recipe did not do what docs/clients.md says."""


def check(condition, message):
    if not condition:
        raise Failed(message)


def distinct(ids, what):
    check(len(set(ids)) == len(ids), f"{what}: {len(ids) - len(set(ids))} ids repeat")


def rising(ids, what):
    """ids are distinct and strictly rising, in the order given."""
    distinct(ids, what)
    for before, after in zip(ids, ids[1:]):
        check(before < after, f"{what}: id {after} follows {before}")


def same_ids(table, got, what, key="item"):
    """got ({key: id}, as the client saw it) names each row with the id that a plain SELECT
    of table, on a connection of its own, finds in the row of that key (a unique column)."""
    with connect() as reader:
        rows = reader.execute(f"SELECT {key}, id FROM {table} WHERE {key} = ANY(%s)", [list(got)]).fetchall()
    found = dict(rows)
    for item, id_ in got.items():
        check(found.get(item) == id_,
              f"{what}: the client got id {id_} for {item!r}, the table has {found.get(item)}")


def connect(**kwargs):
    """An autocommit psycopg connection to the stock server."""
    return psycopg.connect(autocommit=True, **kwargs)


def run(recipes):
    """Runs each recipe (a function whose docstring names it and which returns what it
    showed), prints ok or FAIL for each, and exits 1 if any failed."""
    failed = 0
    for recipe in recipes:
        name = recipe.__doc__.strip().splitlines()[0]
        try:
            print(f"ok {name}: {recipe()}", flush=True)
        except Exception as error:  # a recipe's failure is reported, the others still run
            failed += 1
            print(f"FAIL {name}: {error}", flush=True)
            if not isinstance(error, Failed):
                traceback.print_exc()
    sys.exit(1 if failed else 0)
