-- The row snowflake_parse() returns: the same fields, in the same order, as the native
-- extension's type, so that (snowflake_parse(id)).ts reads alike under either edition.
DO $parts$
BEGIN
  IF pg_catalog.to_regtype('@extschema@.snowflake_parts') IS NULL THEN
    CREATE TYPE @extschema@.snowflake_parts AS (
        ts timestamptz,
        node_id integer,
        backend_slot integer,
        worker_id integer,
        sequence integer,
        gene integer
    );
  END IF;
END
$parts$;

