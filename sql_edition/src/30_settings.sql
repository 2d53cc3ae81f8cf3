-- The edition's settings: node id, layout, epoch and lead bound, in a table that the
-- installing role owns and alone writes (through snowflake_configure), and that every role
-- may read. The native extension keeps them in GUCs that only a superuser or the
-- configuration file may set; a managed service lets nobody be superuser, and a custom GUC
-- can be SET by any role, so a table is the one place a plain role cannot change.
--
-- Two kinds of row, at most one of each: the defaults the install script writes
-- (configured = false) and the row snowflake_configure writes (configured = true), which
-- wins. Only the configured row is dumped (pg_extension_config_dump), so a restore, whose
-- CREATE EXTENSION writes the defaults again, adds the configured row beside them rather
-- than colliding with them.
CREATE TABLE IF NOT EXISTS @extschema@.snowflake_settings (
    configured boolean NOT NULL UNIQUE,
    node_id integer NOT NULL,
    layout text NOT NULL,
    epoch timestamptz NOT NULL,
    max_lead_ms integer NOT NULL CHECK (max_lead_ms BETWEEN 0 AND 60000),
    -- Derived from the layout and the epoch by snowflake_configure; read by every call.
    epoch_ms bigint NOT NULL,
    unit_ms integer NOT NULL,
    total_bits integer NOT NULL,
    time_bits integer NOT NULL, time_shift integer NOT NULL,
    node_bits integer NOT NULL, node_shift integer NOT NULL,
    slot_bits integer NOT NULL, slot_shift integer NOT NULL,
    sequence_bits integer NOT NULL, sequence_shift integer NOT NULL,
    gene_bits integer NOT NULL,
    -- The slots this database mints under, first to last: all of the layout's, or a part
    -- when databases of one server share the node id (50_nodes.sql). NULL in rows written
    -- before the columns came (an earlier release, or its dump restored): all slots.
    first_slot integer,
    last_slot integer,
    -- When the database moved from the worker-first order of its layout to the layout's
    -- (snowflake_configure, 50_nodes.sql): the start of the first tick in the new order.
    -- Ids of earlier ticks parse in the worker-first order (snowflake_parse, 40_functions.sql);
    -- none is minted before it. NULL: every id is in the layout's order.
    reordered_at timestamptz,
    -- Whether every id takes the clock's fraction of its tick when the clock is ahead of
    -- the slot's last id by more than a window of 32 µs, as the native's do (without the
    -- window), at the cost of a WAL-logged setval at such calls; else only a slot's first
    -- id of a tick does (60_next.sql). On by default where the layout has the sequence
    -- right below the time, and only there (snowflake_configure). NULL in rows written
    -- before the column came: the default.
    follow_clock boolean
);
-- An install of an earlier release gets the columns (at the end, where a new install has
-- them); its rows then read as all slots, and follow_clock as the layout's default
-- (snowflake_sql_settings). Without defaults: a function of 0.3.0 takes the table's
-- row type, and PostgreSQL adds no column with a default to a row type in use.
DO $slot_columns$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute
                  WHERE attrelid = '@extschema@.snowflake_settings'::pg_catalog.regclass
                    AND attname = 'first_slot' AND NOT attisdropped) THEN
    ALTER TABLE @extschema@.snowflake_settings ADD COLUMN first_slot integer, ADD COLUMN last_slot integer;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute
                  WHERE attrelid = '@extschema@.snowflake_settings'::pg_catalog.regclass
                    AND attname = 'reordered_at' AND NOT attisdropped) THEN
    ALTER TABLE @extschema@.snowflake_settings ADD COLUMN reordered_at timestamptz;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute
                  WHERE attrelid = '@extschema@.snowflake_settings'::pg_catalog.regclass
                    AND attname = 'follow_clock' AND NOT attisdropped) THEN
    ALTER TABLE @extschema@.snowflake_settings ADD COLUMN follow_clock boolean;
  END IF;
END
$slot_columns$;
GRANT SELECT ON @extschema@.snowflake_settings TO PUBLIC;
SELECT @extschema@.snowflake_sql_dump_with('@extschema@.snowflake_settings', 'WHERE configured');

-- snowflake_sql_settings(): the settings in force, the configured row if any, with the
-- slots of a row that names none (written before the slot columns came) all of them, and
-- follow_clock the layout's default in a row written before that column came.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_settings()
RETURNS @extschema@.snowflake_settings
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r @extschema@.snowflake_settings;
BEGIN
  SELECT s.* INTO r FROM @extschema@.snowflake_settings s ORDER BY s.configured DESC LIMIT 1;
  r.first_slot := coalesce(r.first_slot, 0);
  r.last_slot := coalesce(r.last_slot, (1 << r.slot_bits) - 1);
  r.follow_clock := coalesce(r.follow_clock, @extschema@.snowflake_sql_follows_clock(r.layout));
  RETURN r;
END
$$;

-- snowflake_sql_settings_row(configured, node_id, layout, epoch, max_lead_ms, slots): a
-- settings row with its derived fields, each value checked as the native checks its
-- settings; slots 'all' (or NULL) or a range 'first-last' of the layout's slots;
-- follow_clock the layout's default (on where the sequence is right below the time),
-- which snowflake_configure may turn off.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_settings_row(configured boolean,
    node_id integer, layout text, epoch text, max_lead_ms integer, slots text)
RETURNS @extschema@.snowflake_settings
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  l @extschema@.snowflake_sql_layout := @extschema@.snowflake_sql_read_layout(layout);
  r @extschema@.snowflake_settings;
  epoch_ms numeric;
  bounds text[] := regexp_match(slots, '^\s*([0-9]{1,4})\s*-\s*([0-9]{1,4})\s*$');
BEGIN
  IF l.epoch IS NOT NULL THEN
    RAISE EXCEPTION 'the layout of the settings cannot carry an epoch: "%"', layout
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Give the epoch on its own: snowflake_configure(epoch => ''...'').';
  END IF;
  epoch_ms := @extschema@.snowflake_sql_epoch_ms(epoch);
  IF epoch_ms IS NULL OR epoch_ms < 0 THEN
    RAISE EXCEPTION 'invalid value for snowflake.epoch: "%"', epoch
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Write a time from 1970 on as an ISO 8601 date or time, such as ''2020-01-01'' or ''2020-01-01 00:00:00+00''.';
  END IF;
  IF epoch_ms > @extschema@.snowflake_sql_ms_of(clock_timestamp()) THEN
    RAISE EXCEPTION 'snowflake.epoch "%" is in the future', epoch
      USING ERRCODE = 'invalid_parameter_value', HINT = 'snowflake.epoch must be a time in the past.';
  END IF;
  IF node_id IS NULL OR node_id < 0 OR node_id > (1::bigint << l.node_bits) - 1 THEN
    RAISE EXCEPTION 'node id % does not fit in the % node bits of the layout', node_id, l.node_bits
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = format('With %s node bits, node ids go from 0 to %s.', l.node_bits,
                            (1::bigint << l.node_bits) - 1),
            HINT = 'Give another node id, or a layout with more node bits, to snowflake_configure.';
  END IF;
  -- One sequence per slot: the edition makes 1024 (the most the default 10 worker bits number).
  IF l.slot_bits > 10 THEN
    RAISE EXCEPTION 'the layout ''%'' numbers % slots; the SQL edition numbers at most 1024', l.spec,
        1::bigint << l.slot_bits
      USING ERRCODE = 'configuration_limit_exceeded',
            HINT = 'Give the layout at most 10 slot bits.';
  END IF;
  IF max_lead_ms IS NULL OR max_lead_ms NOT BETWEEN 0 AND 60000 THEN
    RAISE EXCEPTION 'max_lead_ms = % is out of range', max_lead_ms
      USING ERRCODE = 'invalid_parameter_value', DETAIL = 'It goes from 0 to 60000 ms.';
  END IF;
  IF slots IS NULL OR lower(btrim(slots)) = 'all' THEN
    bounds := ARRAY['0', ((1 << l.slot_bits) - 1)::text];
  ELSIF bounds IS NULL OR bounds[1]::integer > bounds[2]::integer THEN
    RAISE EXCEPTION 'invalid value for slots: "%"', slots
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Write the first and the last slot of the range, such as ''64-127'', or ''all''.';
  ELSIF bounds[2]::integer > (1 << l.slot_bits) - 1 THEN
    RAISE EXCEPTION 'slots % do not fit in the % slots of the layout', slots, 1 << l.slot_bits
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = format('With %s slot bits, slots go from 0 to %s.', l.slot_bits, (1 << l.slot_bits) - 1),
            HINT = 'Give a range within them, or a layout with more slot bits (before any id is minted), to snowflake_configure.';
  END IF;
  r.configured := configured;
  r.node_id := node_id;
  r.layout := l.spec;
  r.epoch := timestamptz '1970-01-01 00:00:00+00' + epoch_ms * interval '1 millisecond';
  r.max_lead_ms := max_lead_ms;
  r.epoch_ms := epoch_ms;
  r.unit_ms := l.unit_ms;
  r.total_bits := l.total_bits;
  r.time_bits := l.time_bits; r.time_shift := l.time_shift;
  r.node_bits := l.node_bits; r.node_shift := l.node_shift;
  r.slot_bits := l.slot_bits; r.slot_shift := l.slot_shift;
  r.sequence_bits := l.sequence_bits; r.sequence_shift := l.sequence_shift;
  r.gene_bits := l.gene_bits;
  r.first_slot := bounds[1]::integer;
  r.last_slot := bounds[2]::integer;
  r.follow_clock := @extschema@.snowflake_sql_follows_clock(l.spec);
  RETURN r;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_settings_row(boolean, integer, text, text, integer, text) FROM PUBLIC;

-- An install of an earlier release keeps the layout it mints with, whatever the default
-- is now: its ids and the code of sessions still running parse and mint in that layout's
-- order. Where it only has the defaults row and that row's layout is no longer the default
-- one (0.3.0's default, 'time:41, node:2, slot:8, sequence:12', is now 'worker-first'), the
-- row is written again as configured: a dump keeps only the configured row, and a restore's
-- CREATE EXTENSION writes the defaults of the release it runs. The move to the new order is
-- the owner's to make, by snowflake_configure (50_nodes.sql).
INSERT INTO @extschema@.snowflake_settings
SELECT true, d.node_id, d.layout, d.epoch, d.max_lead_ms, d.epoch_ms, d.unit_ms, d.total_bits,
       d.time_bits, d.time_shift, d.node_bits, d.node_shift, d.slot_bits, d.slot_shift,
       d.sequence_bits, d.sequence_shift, d.gene_bits, d.first_slot, d.last_slot, d.reordered_at,
       d.follow_clock
  FROM @extschema@.snowflake_settings d
 WHERE NOT d.configured
   AND d.layout <> (@extschema@.snowflake_sql_read_layout('default')).spec
   AND NOT EXISTS (SELECT FROM @extschema@.snowflake_settings c WHERE c.configured);

-- The defaults: those of a stock native server (node 0, the default layout, epoch
-- 2020-01-01, a lead bound of 1 s).
INSERT INTO @extschema@.snowflake_settings
SELECT (@extschema@.snowflake_sql_settings_row(false, 0, 'default', '2020-01-01', 1000, 'all')).*
ON CONFLICT DO NOTHING;
