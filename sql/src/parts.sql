-- The row snowflake_parse() returns.
CREATE TYPE snowflake_parts AS (
    ts timestamptz,
    node_id integer,
    backend_slot integer,
    worker_id integer,
    sequence integer,
    gene integer
);
