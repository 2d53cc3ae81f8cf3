-- Layouts from text, as snowflake_core/src/spec.rs reads them: a preset name, or a spec
-- naming the fields from the high end down ('time:41, sequence:12, node:2, slot:8'), with
-- an optional unit on time ('time:37/10ms') and, for a layout given to a function, an
-- 'epoch:<ISO 8601>' entry last. The reasons of the errors are the native ones, word
-- for word, so that both editions refuse a bad layout alike.

-- A layout, read: where each field sits (width and shift; an absent field has width 0),
-- the tick, and the epoch the text named, if any (still text).
DO $layout_type$
BEGIN
  IF pg_catalog.to_regtype('@extschema@.snowflake_sql_layout') IS NULL THEN
    CREATE TYPE @extschema@.snowflake_sql_layout AS (
        spec text,          -- as snowflake_layout() prints it
        unit_ms integer,    -- 1, 10 or 1000
        total_bits integer, -- 63, or 53 for ids a JavaScript number holds
        time_bits integer, time_shift integer,
        node_bits integer, node_shift integer,
        slot_bits integer, slot_shift integer,
        sequence_bits integer, sequence_shift integer,
        gene_bits integer,
        epoch text          -- the epoch entry of the text, or NULL
    );
  END IF;
END
$layout_type$;

-- snowflake_sql_invalid_layout(value, reason): the native error for a layout that cannot be.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_invalid_layout(value text, reason text)
RETURNS void LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RAISE EXCEPTION 'invalid layout "%": %', value, reason
    USING ERRCODE = 'invalid_parameter_value',
          DETAIL = 'Name the fields from the high end down, each with its width in bits, such as ''time:41, sequence:12, node:2, slot:8'' (time first, with an optional unit 1ms, 10ms or 1s: ''time:37/10ms''; gene last), or a preset: default, worker-first, js53, twitter, discord, instagram, sonyflake.';
END
$$;

-- Rust's str::trim: white space at either end.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_trim(text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.regexp_replace($1, '^[[:space:]]+|[[:space:]]+$', '', 'g');

-- snowflake_sql_read_layout(text): the layout a preset or spec names (spec.rs's parse).
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_read_layout(text_in text)
RETURNS @extschema@.snowflake_sql_layout
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  presets constant text[][] := ARRAY[
    -- The sequence right below the time: it follows the clock inside the tick (60_next.sql).
    ['default', 'time:41, sequence:12, node:2, slot:8'],
    -- 0.3.0's default, in Twitter's field order: each slot's ids of a tick are a block.
    ['worker-first', 'time:41, node:2, slot:8, sequence:12'],
    ['js53', 'time:37/10ms, sequence:6, node:2, slot:8'],
    ['twitter', 'time:41, node:5, slot:5, sequence:12, epoch:2010-11-04T01:42:54.657Z'],
    ['discord', 'time:41, node:5, slot:5, sequence:12, epoch:2015-01-01T00:00:00Z'],
    ['instagram', 'time:40, node:13, sequence:10, epoch:2011-08-24T21:07:01.721Z'],
    ['sonyflake', 'time:39/10ms, sequence:8, node:16, epoch:2014-09-01T00:00:00Z']];
  field_names constant text[] := ARRAY['time', 'node', 'slot', 'sequence', 'gene'];
  trimmed text := @extschema@.snowflake_sql_trim(text_in);
  spec text := trimmed;
  entry text;
  name text;
  value text;
  width_text text;
  unit_name text;
  width numeric;
  widest integer;
  narrowest integer;
  names text[] := '{}';
  widths integer[] := '{}';
  unit_ms integer := 1;
  epoch text;
  total integer := 0;
  shift integer;
  r @extschema@.snowflake_sql_layout;
  i integer;
BEGIN
  FOR i IN 1 .. array_length(presets, 1) LOOP
    IF lower(presets[i][1]) = lower(trimmed) THEN
      spec := presets[i][2];
    END IF;
  END LOOP;
  IF strpos(spec, ',') = 0 AND strpos(spec, ':') = 0 THEN
    PERFORM @extschema@.snowflake_sql_invalid_layout(text_in,
      format('no preset is named "%s"', @extschema@.snowflake_sql_trim(spec)));
  END IF;
  FOREACH entry IN ARRAY string_to_array(spec, ',') LOOP
    entry := @extschema@.snowflake_sql_trim(entry);
    IF epoch IS NOT NULL THEN
      PERFORM @extschema@.snowflake_sql_invalid_layout(text_in, 'the epoch must be the last entry');
    END IF;
    IF strpos(entry, ':') = 0 THEN
      PERFORM @extschema@.snowflake_sql_invalid_layout(text_in,
        format('"%s" is not a name:width entry', entry));
    END IF;
    name := @extschema@.snowflake_sql_trim(substr(entry, 1, strpos(entry, ':') - 1));
    value := @extschema@.snowflake_sql_trim(substr(entry, strpos(entry, ':') + 1));
    IF name = 'epoch' THEN
      epoch := value;
      CONTINUE;
    END IF;
    IF NOT name = ANY (field_names) THEN
      PERFORM @extschema@.snowflake_sql_invalid_layout(text_in, format('unknown field "%s"', name));
    END IF;
    IF name = ANY (names) THEN
      PERFORM @extschema@.snowflake_sql_invalid_layout(text_in,
        format('the field "%s" appears twice', name));
    END IF;
    IF names[cardinality(names)] = 'gene' THEN
      PERFORM @extschema@.snowflake_sql_invalid_layout(text_in, '"gene" must be the last field');
    END IF;
    IF (name = 'time') <> (cardinality(names) = 0) THEN
      PERFORM @extschema@.snowflake_sql_invalid_layout(text_in, '"time" must be the first field');
    END IF;
    width_text := value;
    IF strpos(value, '/') > 0 THEN
      IF name <> 'time' THEN
        PERFORM @extschema@.snowflake_sql_invalid_layout(text_in,
          format('only "time" has a unit, not "%s"', name));
      END IF;
      unit_name := @extschema@.snowflake_sql_trim(substr(value, strpos(value, '/') + 1));
      unit_ms := CASE unit_name WHEN '1ms' THEN 1 WHEN '10ms' THEN 10 WHEN '1s' THEN 1000 END;
      IF unit_ms IS NULL THEN
        PERFORM @extschema@.snowflake_sql_invalid_layout(text_in,
          format('unknown time unit "%s"; use 1ms, 10ms or 1s', unit_name));
      END IF;
      width_text := @extschema@.snowflake_sql_trim(substr(value, 1, strpos(value, '/') - 1));
    END IF;
    -- Rust's u32 parser: ASCII digits with an optional leading '+', at most 4294967295.
    IF width_text !~ '^\+?[0-9]+$' OR ltrim(width_text, '+')::numeric > 4294967295 THEN
      PERFORM @extschema@.snowflake_sql_invalid_layout(text_in,
        format('the width of "%s" is not a number: "%s"', name, width_text));
    END IF;
    width := ltrim(width_text, '+')::numeric;
    widest := CASE WHEN name = 'time' THEN 63 ELSE 31 END;
    narrowest := CASE WHEN name = 'time' THEN 1 ELSE 0 END;
    IF width < narrowest OR width > widest THEN
      PERFORM @extschema@.snowflake_sql_invalid_layout(text_in,
        format('"%s" has %s bits; it takes %s to %s', name, width, narrowest, widest));
    END IF;
    names := names || name;
    widths := widths || width::integer;
    total := total + width::integer;
  END LOOP;
  IF cardinality(names) = 0 THEN
    PERFORM @extschema@.snowflake_sql_invalid_layout(text_in, 'it names no fields; "time" comes first');
  END IF;
  IF total <> 63 AND total <> 53 THEN
    PERFORM @extschema@.snowflake_sql_invalid_layout(text_in,
      format('the widths add up to %s; they must add up to 63 (or 53, for ids a JavaScript number holds exactly)', total));
  END IF;
  r.unit_ms := unit_ms;
  r.total_bits := total;
  r.epoch := epoch;
  r.node_bits := 0; r.node_shift := 0; r.slot_bits := 0; r.slot_shift := 0;
  r.sequence_bits := 0; r.sequence_shift := 0; r.gene_bits := 0;
  shift := total;
  r.spec := '';
  FOR i IN 1 .. cardinality(names) LOOP
    shift := shift - widths[i];
    r.spec := r.spec || CASE WHEN i > 1 THEN ', ' ELSE '' END || names[i] || ':' || widths[i]
      || CASE WHEN names[i] = 'time' AND unit_ms <> 1
              THEN '/' || CASE unit_ms WHEN 10 THEN '10ms' ELSE '1s' END ELSE '' END;
    CASE names[i]
      WHEN 'time' THEN r.time_bits := widths[i]; r.time_shift := shift;
      WHEN 'node' THEN r.node_bits := widths[i]; r.node_shift := shift;
      WHEN 'slot' THEN r.slot_bits := widths[i]; r.slot_shift := shift;
      WHEN 'sequence' THEN r.sequence_bits := widths[i]; r.sequence_shift := shift;
      ELSE r.gene_bits := widths[i];
    END CASE;
  END LOOP;
  RETURN r;
END
$$;

-- The order of the fields, on a layout as snowflake_sql_read_layout prints it (its spec:
-- 'name:width' entries separated by ', ', time first). As snowflake_core/src/layout.rs's
-- sequence_follows_clock and worker_first, entry by entry, so that a field of width 0
-- counts where the text names it.

-- snowflake_sql_follows_clock(spec): whether the sequence is the field right below the
-- time, with at least one bit: then a slot's sequence starts each tick at the clock's
-- fraction of it (60_next.sql), and the ids of every slot sort by their minting time below
-- the tick, as a B-tree's rightmost page wants them.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_follows_clock(spec text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.split_part(spec, ', ', 2) ~ '^sequence:[1-9]';

-- snowflake_sql_worker_first(spec): the same fields with the sequence moved below the node
-- and slot (above the gene), for a layout whose sequence follows the clock; any other
-- layout as it is. The order in which a database of 0.3.0 or earlier minted its ids, and
-- that snowflake_parse reads the ids before reordered_at in (30_settings.sql).
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_worker_first(spec text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN NOT @extschema@.snowflake_sql_follows_clock(spec) THEN spec
  ELSE (SELECT pg_catalog.string_agg(e.entry, ', ' ORDER BY
                 CASE WHEN e.entry LIKE 'time:%' THEN 0
                      WHEN e.entry LIKE 'sequence:%' THEN 2
                      WHEN e.entry LIKE 'gene:%' THEN 3 ELSE 1 END, e.n)
          FROM pg_catalog.unnest(pg_catalog.string_to_array(spec, ', ')) WITH ORDINALITY e (entry, n)) END;

-- snowflake_sql_clock_first(spec): the same fields with the sequence moved right below the
-- time: the layout a database minting in the worker-first order may move to
-- (snowflake_configure), when its worker-first order is this one.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_clock_first(spec text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (SELECT pg_catalog.string_agg(e.entry, ', ' ORDER BY
               CASE WHEN e.entry LIKE 'time:%' THEN 0
                    WHEN e.entry LIKE 'sequence:%' THEN 1 ELSE 2 END, e.n)
          FROM pg_catalog.unnest(pg_catalog.string_to_array(spec, ', ')) WITH ORDINALITY e (entry, n));
