-- Times in and out of ids, as snowflake_core/src/time.rs does them: exact milliseconds
-- (numeric, since a timestamptz reaches past what bigint milliseconds since 1970 can
-- be multiplied into), the native messages, and times printed as the native prints them.

-- snowflake_sql_format_ms(ms): a time as the native messages print it (chrono's format):
-- '2020-01-01 00:00:00+00', with '.mmm' when the ms are not 0, a signed year outside 0 to
-- 9999, and 'N ms after 1970-01-01 00:00:00+00' past the years chrono can print.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_format_ms(ms numeric) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t timestamp;
  year integer;
  fraction integer := mod(mod(ms, 1000) + 1000, 1000);
BEGIN
  -- chrono's range ends with the year 262143; PostgreSQL's timestamps start after chrono's.
  IF ms > 8210298412799999 THEN
    RETURN ms || ' ms after 1970-01-01 00:00:00+00';
  END IF;
  t := timestamp '1970-01-01 00:00:00' + floor(ms / 86400000) * interval '1 day'
       + mod(mod(ms, 86400000) + 86400000, 86400000) * interval '1 millisecond';
  year := extract(year FROM t);
  IF year < 0 THEN
    year := year + 1; -- 1 BC is the proleptic year 0
  END IF;
  -- lpad would cut a longer year: zeros are added only to reach 4 digits.
  RETURN CASE WHEN year BETWEEN 0 AND 9999 THEN lpad(year::text, 4, '0')
              WHEN year < 0 THEN '-' || lpad((-year)::text, greatest(4, length((-year)::text)), '0')
              ELSE '+' || year::text END
         || to_char(t, '-MM-DD HH24:MI:SS')
         || CASE WHEN fraction <> 0 THEN '.' || lpad(fraction::text, 3, '0') ELSE '' END
         || '+00';
END
$$;

-- snowflake_sql_ms_of(ts): the ms since 1970 of a finite timestamptz, rounded toward the past.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_ms_of(ts timestamptz) RETURNS numeric
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN floor(extract(epoch FROM ts) * 1000);

-- snowflake_sql_raise(sqlstate, message, detail, hint, result): raises the error; typed as
-- `result` so that a CASE branch of any type can call it. Stable, not immutable: the
-- planner must never fold a call of it (an error of a branch not taken) into a constant.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_raise(sqlstate text, message text,
    detail text, hint text, result anyelement)
RETURNS anyelement LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message,
        DETAIL = coalesce(detail, ''), HINT = coalesce(hint, '');
END
$$;

-- snowflake_sql_ticks_of(ts, unit_ms, epoch_ms, time_bits): the tick of the layout that ts
-- falls in, checked to fit the time field (Epoch::ticks_of). A SQL body, bound when it is
-- created (no search_path of a caller reaches it) and inlined into its callers.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_ticks_of(ts timestamptz, unit_ms integer,
    epoch_ms bigint, time_bits integer)
RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE
  WHEN NOT isfinite(ts) THEN
    @extschema@.snowflake_sql_raise('22008', 'snowflake ids cannot hold an infinite timestamp',
                                    NULL, NULL, NULL::bigint)
  WHEN @extschema@.snowflake_sql_ms_of(ts) < epoch_ms THEN
    @extschema@.snowflake_sql_raise('22008', format('timestamp %s is before snowflake.epoch (%s)',
        @extschema@.snowflake_sql_format_ms(@extschema@.snowflake_sql_ms_of(ts)),
        @extschema@.snowflake_sql_format_ms(epoch_ms)), NULL, NULL, NULL::bigint)
  WHEN floor((@extschema@.snowflake_sql_ms_of(ts) - epoch_ms) / unit_ms)
       > (9223372036854775807 >> (63 - time_bits)) THEN
    -- The native computes the last time with saturating i64 arithmetic.
    @extschema@.snowflake_sql_raise('22008', format('timestamp %s is past the last time snowflake ids can hold (%s)',
        @extschema@.snowflake_sql_format_ms(@extschema@.snowflake_sql_ms_of(ts)),
        @extschema@.snowflake_sql_format_ms(least(((9223372036854775807 >> (63 - time_bits))::numeric + 1)
                                                  * unit_ms + epoch_ms - 1, 9223372036854775807))),
        NULL, NULL, NULL::bigint)
  ELSE floor((@extschema@.snowflake_sql_ms_of(ts) - epoch_ms) / unit_ms)::bigint
END;

-- snowflake_sql_ts_of(id, ticks, unit_ms, epoch_ms): the start of tick `ticks` as a
-- timestamptz, or the native error past what a timestamptz holds (Epoch::pg_micros_of:
-- from 294277-01-01 on). Exact to the ms at any distance: whole days are added as days.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_ts_of(id bigint, ticks bigint,
    unit_ms integer, epoch_ms bigint)
RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE
  WHEN ticks::numeric * unit_ms + epoch_ms >= 9223371331200000 + 946684800000 THEN
    @extschema@.snowflake_sql_raise('22008',
        format('snowflake id %s holds a time past the last one a timestamptz can hold', id),
        NULL, NULL, NULL::timestamptz)
  ELSE (timestamp '1970-01-01 00:00:00'
        + ((ticks * unit_ms + epoch_ms) / 86400000) * interval '1 day'
        + ((ticks * unit_ms + epoch_ms) % 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC'
END;

-- snowflake_sql_epoch_ms(epoch): an epoch's text in ms since 1970: an ISO 8601 date, or
-- date and time with an optional UTC offset (none means UTC, whatever the session's time
-- zone); NULL for any other text. Whether it is from 1970 on and in the past is the
-- caller's to check, with its own error.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_epoch_ms(epoch text)
RETURNS numeric LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF epoch !~ '^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([ Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)?)?$' THEN
    RETURN NULL;
  END IF;
  RETURN CASE WHEN epoch ~ '([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)$' AND epoch ~ ':'
              THEN @extschema@.snowflake_sql_ms_of(upper(epoch)::timestamptz)
              ELSE @extschema@.snowflake_sql_ms_of(upper(epoch)::timestamp AT TIME ZONE 'UTC') END;
EXCEPTION WHEN data_exception THEN
  RETURN NULL;
END
$$;

-- snowflake_sql_read_epoch(epoch, layout): the epoch entry of a layout given to a function,
-- in ms since 1970, from 1970 on and in the past; else the native error naming the layout.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_read_epoch(epoch text, layout text)
RETURNS bigint LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  ms numeric := @extschema@.snowflake_sql_epoch_ms(epoch);
BEGIN
  IF ms IS NULL OR ms < 0 OR ms > @extschema@.snowflake_sql_ms_of(clock_timestamp()) THEN
    PERFORM @extschema@.snowflake_sql_invalid_layout(layout,
      format('the epoch "%s" is not an ISO 8601 time from 1970 on, in the past', epoch));
  END IF;
  RETURN ms;
END
$$;
