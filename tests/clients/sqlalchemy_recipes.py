"""docs/clients.md, SQLAlchemy 2 (Core and ORM) on psycopg 3: with
server_default=func.snowflake_next(monotonic=True) a flush of many objects, an ORM bulk
INSERT and a Core executemany each send one INSERT per 1,000 rows ("insertmanyvalues"),
and SQLAlchemy matches the ids returned to the rows by sorting them, which is right
because the ids of one statement rise in row order. With text("snowflake_next()") it
sends one INSERT per row."""

from sqlalchemy import BigInteger, create_engine, event, func, insert, text
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from common import check, connect, rising, run, same_ids

ROWS = 2500  # three statements of insertmanyvalues' 1,000 rows at most
engine = create_engine("postgresql+psycopg://")  # libpq's PG* variables name the server
inserts = []  # the INSERT statements sent since the last clear()


@event.listens_for(engine, "before_cursor_execute")
def count_inserts(conn, cursor, statement, parameters, context, executemany):
    if statement.startswith("INSERT"):
        inserts.append(statement)


class Base(DeclarativeBase):
    pass


class Order(Base):  # the recipe
    __tablename__ = "sa_orders"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True,
                                    server_default=func.snowflake_next(monotonic=True))
    item: Mapped[str]


class TextOrder(Base):  # the trap: SQLAlchemy cannot know that this text rises
    __tablename__ = "sa_text_orders"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, server_default=text("snowflake_next()"))
    item: Mapped[str]


Base.metadata.drop_all(engine)
Base.metadata.create_all(engine)


def items(prefix):
    return [f"{prefix} {n}" for n in range(ROWS)]


def batched(table, got, what, statements=3):
    """got ({item: id} in the order given) came from so many INSERT statements, each id its
    row's, rising in that order."""
    check(len(inserts) == statements, f"{what}: {len(inserts)} INSERT statements for {ROWS} rows, not {statements}")
    same_ids(table, got, what)
    rising(list(got.values()), what)


def flushed(model, prefix):
    """ROWS new objects of model, added and flushed: {item: id} as the objects got them."""
    inserts.clear()
    with Session(engine) as session:
        objects = [model(item=item) for item in items(prefix)]
        session.add_all(objects)
        session.flush()
        got = {obj.item: obj.id for obj in objects}  # before commit() expires them
        session.commit()
    return got


def core_inserted(prefix, **returning):
    """ROWS rows inserted by Core's executemany with RETURNING id: {item: id}."""
    inserts.clear()
    given = items(prefix)
    table = Order.__table__
    with engine.begin() as conn:
        ids = conn.execute(insert(table).returning(table.c.id, **returning), [{"item": item} for item in given])
        return dict(zip(given, ids.scalars().all()))


def ddl_default():
    """SQLAlchemy: create_all() declares DEFAULT snowflake_next()"""
    with connect() as conn:
        default = conn.execute("""SELECT column_default FROM information_schema.columns
                                  WHERE table_name = 'sa_orders' AND column_name = 'id'""").fetchone()[0]
    check(default == "snowflake_next()", f"the column's default is {default!r}")
    return f"sa_orders.id DEFAULT {default}"


def orm_flush():
    """SQLAlchemy ORM: add_all() and flush() with func.snowflake_next(monotonic=True)"""
    batched("sa_orders", flushed(Order, "flushed"), "flush")
    return f"{ROWS} objects in 3 INSERTs, each object given its row's id, rising in the order added"


def orm_bulk():
    """SQLAlchemy ORM bulk: insert(Order).returning(Order.id, sort_by_parameter_order=True)"""
    inserts.clear()
    given = items("bulk")
    with Session(engine) as session:
        ids = session.scalars(insert(Order).returning(Order.id, sort_by_parameter_order=True),
                              [{"item": item} for item in given]).all()
        session.commit()
    batched("sa_orders", dict(zip(given, ids)), "ORM bulk")
    return f"{ROWS} rows in 3 INSERTs, ids in parameter order, each its row's"


def core_executemany():
    """SQLAlchemy Core: execute(insert(t).returning(t.c.id, sort_by_parameter_order=True), rows)"""
    batched("sa_orders", core_inserted("core", sort_by_parameter_order=True), "Core")
    return f"{ROWS} rows in 3 INSERTs, ids in parameter order, each its row's"


def core_in_returning_order():
    """SQLAlchemy Core: execute(insert(t).returning(t.c.id), rows), no sort asked for"""
    batched("sa_orders", core_inserted("unsorted"), "Core, unsorted")
    return f"{ROWS} rows in 3 INSERTs, RETURNING's rows in parameter order, each id its row's"


def text_default_row_by_row():
    """SQLAlchemy ORM, the trap: server_default=text("snowflake_next()")"""
    batched("sa_text_orders", flushed(TextOrder, "text"), "flush with a text() default", statements=ROWS)
    return f"{ROWS} objects in {ROWS} INSERTs, one per object (ids right, batching lost)"


def no_prepare_for_poolers():
    """SQLAlchemy, for transaction pooling: connect_args={"prepare_threshold": None}"""
    unprepared = create_engine("postgresql+psycopg://", connect_args={"prepare_threshold": None})
    with engine.connect() as default, unprepared.connect() as conn:
        threshold = default.connection.dbapi_connection.prepare_threshold
        check(threshold == 5, f"psycopg's threshold through SQLAlchemy is {threshold}, not 5: update docs/clients.md")
        check(conn.connection.dbapi_connection.prepare_threshold is None, "connect_args did not reach psycopg")
    unprepared.dispose()
    return "psycopg's connections prepare from the 6th execution by default, never with connect_args"


run([ddl_default, orm_flush, orm_bulk, core_executemany, core_in_returning_order, text_default_row_by_row,
     no_prepare_for_poolers])
