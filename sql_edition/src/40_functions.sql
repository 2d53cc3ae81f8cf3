-- The functions of ids and times: the native ones' names, arguments, results, labels and
-- errors (src/sql.rs and snowflake_core/src/layout.rs). Stable where they read the
-- settings, as the native's read its GUCs: a stable function in a WHERE clause is
-- evaluated once per scan, so `id >= snowflake_floor(a)` is a primary-key index condition.

-- snowflake_sql_field(id, width, shift): the field of `width` bits at bit `shift`.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_field(id bigint, width integer, shift integer)
RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN width = 0 THEN 0 ELSE (id >> shift) & (9223372036854775807 >> (63 - width)) END;

-- snowflake_sql_parts(id, layout, epoch_ms): the row of an id (Layout::decompose and
-- parts_row), refusing a negative id and one wider than its layout.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_parts(id bigint,
    l @extschema@.snowflake_sql_layout, epoch_ms bigint)
RETURNS @extschema@.snowflake_parts
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE
  WHEN id < 0 THEN
    @extschema@.snowflake_sql_raise('22003', format('snowflake id %s is negative', id),
        'Snowflake ids are 0 or greater: their sign bit is always 0.', NULL,
        NULL::@extschema@.snowflake_parts)
  WHEN (l).total_bits < 63 AND id >> (l).total_bits <> 0 THEN
    @extschema@.snowflake_sql_raise('22003',
        format('snowflake id %s does not fit in the %s bits of its layout', id, (l).total_bits),
        format('Ids of this layout go from 0 to 2^%s - 1 = %s.', (l).total_bits,
               (1::bigint << (l).total_bits) - 1), NULL,
        NULL::@extschema@.snowflake_parts)
  ELSE ROW(
    @extschema@.snowflake_sql_ts_of(id, @extschema@.snowflake_sql_field(id, (l).time_bits, (l).time_shift),
                                    (l).unit_ms, epoch_ms),
    @extschema@.snowflake_sql_field(id, (l).node_bits, (l).node_shift),
    @extschema@.snowflake_sql_field(id, (l).slot_bits, (l).slot_shift),
    -- The node and slot side by side: NULL when they need more than an integer's 31 bits.
    CASE WHEN (@extschema@.snowflake_sql_field(id, (l).node_bits, (l).node_shift) << (l).slot_bits)
              | @extschema@.snowflake_sql_field(id, (l).slot_bits, (l).slot_shift) <= 2147483647
         THEN (@extschema@.snowflake_sql_field(id, (l).node_bits, (l).node_shift) << (l).slot_bits)
              | @extschema@.snowflake_sql_field(id, (l).slot_bits, (l).slot_shift) END,
    @extschema@.snowflake_sql_field(id, (l).sequence_bits, (l).sequence_shift),
    @extschema@.snowflake_sql_field(id, (l).gene_bits, 0))::@extschema@.snowflake_parts
END;

-- snowflake_sql_layout_of(s): the layout of a settings row.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_layout_of(s @extschema@.snowflake_settings)
RETURNS @extschema@.snowflake_sql_layout
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ROW(s.layout, s.unit_ms, s.total_bits, s.time_bits, s.time_shift, s.node_bits,
           s.node_shift, s.slot_bits, s.slot_shift, s.sequence_bits, s.sequence_shift,
           s.gene_bits, NULL)::@extschema@.snowflake_sql_layout;

-- snowflake_sql_given_layout(layout): a layout given to a function, with its epoch in ms:
-- its own, or else the settings' (layout_of in src/sql.rs).
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_given_layout(layout text,
    OUT l @extschema@.snowflake_sql_layout, OUT epoch_ms bigint)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  l := @extschema@.snowflake_sql_read_layout(layout);
  IF l.epoch IS NOT NULL THEN
    epoch_ms := @extschema@.snowflake_sql_read_epoch(l.epoch, layout);
  ELSE
    epoch_ms := (@extschema@.snowflake_sql_settings()).epoch_ms;
  END IF;
END
$$;

-- snowflake_floor(ts): the smallest id of the tick of ts.
-- floor, at and parse read the settings in PL/pgSQL, which keeps its plans for the session
-- (a SQL function that reads a table is planned again at every call), and call helpers
-- with SQL bodies, which PL/pgSQL inlines into those plans.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_floor(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  s @extschema@.snowflake_settings;
BEGIN
  SELECT * INTO s FROM @extschema@.snowflake_settings ORDER BY configured DESC LIMIT 1;
  RETURN @extschema@.snowflake_sql_ticks_of(ts, s.unit_ms, s.epoch_ms, s.time_bits) << s.time_shift;
END
$$;

-- snowflake_at(ts, uid): the tick of ts with the uid filling every bit below the time.
-- The time is checked first, as the native does.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_at(ts timestamptz, uid bigint) RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  s @extschema@.snowflake_settings;
  ticks bigint;
BEGIN
  SELECT * INTO s FROM @extschema@.snowflake_settings ORDER BY configured DESC LIMIT 1;
  ticks := @extschema@.snowflake_sql_ticks_of(ts, s.unit_ms, s.epoch_ms, s.time_bits);
  IF uid < 0 OR uid > (1::bigint << s.time_shift) - 1 THEN
    RAISE EXCEPTION 'uid % is out of range', uid
      USING ERRCODE = 'numeric_value_out_of_range',
            DETAIL = format('The uid fills the %s low bits of the id: it must be between 0 and %s.',
                            s.time_shift, (1::bigint << s.time_shift) - 1);
  END IF;
  RETURN (ticks << s.time_shift) | uid;
END
$$;

-- snowflake_parse(id): the parts of an id of this database's layout. In a database that
-- moved to its layout's order (reordered_at, 30_settings.sql), an id of an earlier tick is
-- in the worker-first order of the same fields, as the native's snowflake.reordered_at
-- reads it: both orders share the time field, so the tick tells which order an id has.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_parse(id bigint)
RETURNS @extschema@.snowflake_parts
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  s @extschema@.snowflake_settings;
  l @extschema@.snowflake_sql_layout;
  r @extschema@.snowflake_parts;
BEGIN
  SELECT * INTO s FROM @extschema@.snowflake_settings ORDER BY configured DESC LIMIT 1;
  l := @extschema@.snowflake_sql_layout_of(s);
  IF s.reordered_at IS NOT NULL
     AND @extschema@.snowflake_sql_field(id, l.time_bits, l.time_shift)
         < floor((@extschema@.snowflake_sql_ms_of(s.reordered_at) - s.epoch_ms) / s.unit_ms) THEN
    l := @extschema@.snowflake_sql_read_layout(@extschema@.snowflake_sql_worker_first(s.layout));
  END IF;
  r := @extschema@.snowflake_sql_parts(id, l, s.epoch_ms);
  RETURN r;
END
$$;

-- snowflake_parse(id, layout): the parts of an id of another layout (a preset or a spec,
-- which may end with its epoch).
CREATE OR REPLACE FUNCTION @extschema@.snowflake_parse(id bigint, layout text)
RETURNS @extschema@.snowflake_parts
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  g record;
  l @extschema@.snowflake_sql_layout;
  r @extschema@.snowflake_parts;
BEGIN
  SELECT * INTO g FROM @extschema@.snowflake_sql_given_layout(layout);
  l := g.l;
  r := @extschema@.snowflake_sql_parts(id, l, g.epoch_ms);
  RETURN r;
END
$$;

-- snowflake_compose(ts, node_id, backend_slot, sequence, gene, layout): the id of the
-- parts, the exact inverse of snowflake_parse; NULL parts give NULL. As the native, the
-- layout is read first, then the time, then the other parts in field order.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_compose(ts timestamptz, node_id integer,
    backend_slot integer, sequence integer, gene integer DEFAULT 0, layout text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  given record;
  l @extschema@.snowflake_sql_layout;
  epoch_ms bigint;
  s @extschema@.snowflake_settings;
  ticks bigint;
  names constant text[] := ARRAY['time', 'node', 'slot', 'sequence', 'gene'];
  vals bigint[];
  widths integer[];
  shifts integer[];
  max bigint;
  id bigint := 0;
  i integer;
BEGIN
  IF layout IS NOT NULL THEN
    SELECT * INTO given FROM @extschema@.snowflake_sql_given_layout(layout);
    l := given.l;
    epoch_ms := given.epoch_ms;
  ELSE
    s := @extschema@.snowflake_sql_settings();
    l := @extschema@.snowflake_sql_layout_of(s);
    epoch_ms := s.epoch_ms;
  END IF;
  IF ts IS NULL THEN
    RETURN NULL;
  END IF;
  ticks := @extschema@.snowflake_sql_ticks_of(ts, l.unit_ms, epoch_ms, l.time_bits);
  IF node_id IS NULL OR backend_slot IS NULL OR sequence IS NULL OR gene IS NULL THEN
    RETURN NULL;
  END IF;
  vals := ARRAY[ticks, node_id, backend_slot, sequence, gene];
  widths := ARRAY[l.time_bits, l.node_bits, l.slot_bits, l.sequence_bits, l.gene_bits];
  shifts := ARRAY[l.time_shift, l.node_shift, l.slot_shift, l.sequence_shift, 0];
  FOR i IN 1 .. 5 LOOP
    max := CASE WHEN widths[i] = 0 THEN 0 ELSE 9223372036854775807 >> (63 - widths[i]) END;
    IF vals[i] < 0 OR vals[i] > max THEN
      IF max = 0 THEN
        RAISE EXCEPTION '% % does not fit: the layout has no % bits', names[i], vals[i], names[i]
          USING ERRCODE = 'numeric_value_out_of_range';
      END IF;
      RAISE EXCEPTION '% % does not fit the layout: it goes from 0 to %', names[i], vals[i], max
        USING ERRCODE = 'numeric_value_out_of_range';
    END IF;
    id := id | (vals[i] << shifts[i]);
  END LOOP;
  RETURN id;
END
$$;

-- snowflake_layout(): this database's layout, as a spec snowflake_parse(id, layout) reads.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_layout() RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
  SELECT s.layout FROM @extschema@.snowflake_sql_settings() s
$$;
