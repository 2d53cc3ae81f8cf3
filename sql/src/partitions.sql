-- snowflake_bounds(from_ts, to_ts): the id range of the time range [from_ts, to_ts), as
-- the bounds of a range partition on an id column: a partition FROM (lower) TO (upper)
-- holds exactly the ids minted in that time range (by snowflake_next() or snowflake_at()),
-- whatever the layout, since both ends are snowflake_floor(). PL/pgSQL, so the body is
-- resolved at call time, under a search_path of pg_catalog alone (see snowflake_convert).
CREATE FUNCTION snowflake_bounds(from_ts timestamptz, to_ts timestamptz,
    OUT lower bigint, OUT upper bigint)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $bounds$
BEGIN
  lower := @extschema@.snowflake_floor(from_ts);
  upper := @extschema@.snowflake_floor(to_ts);
  -- A range within one tick (a layout with 10 ms or 1 s ticks) is empty too.
  IF lower >= upper THEN
    RAISE EXCEPTION 'the time range [%, %) holds no snowflake id', from_ts, to_ts
      USING ERRCODE = 'data_exception',
            DETAIL = format('Its bounds are %s and %s: the start must be in an earlier tick than the end.',
                            lower, upper);
  END IF;
END
$bounds$;

COMMENT ON FUNCTION snowflake_bounds(timestamptz, timestamptz) IS
    'The ids of the time range [from_ts, to_ts): lower = snowflake_floor(from_ts), upper = snowflake_floor(to_ts), the bounds of a range partition FOR VALUES FROM (lower) TO (upper) holding exactly the ids of that range.';
