-- snowflake_pg 0.1.0 to 0.2.0. Run by ALTER EXTENSION snowflake_pg UPDATE, once the 0.2.0
-- library is installed: the library serves 0.1.0's objects until then. Afterwards the
-- database's objects are those of a fresh 0.2.0 install (tests/reliability/19-upgrade.sh
-- compares them).
\echo Use "ALTER EXTENSION snowflake_pg UPDATE TO '0.2.0'" to load this file. \quit

-- snowflake_parse() gains the gene of layouts with gene bits.
ALTER TYPE snowflake_parts ADD ATTRIBUTE gene integer;

CREATE TABLE snowflake_nodes (
    node_id integer PRIMARY KEY,
    system_identifier bigint NOT NULL,
    server text NOT NULL,
    layout text NOT NULL,
    epoch timestamptz NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT now()
);
SELECT pg_catalog.pg_extension_config_dump('snowflake_nodes', '');
GRANT SELECT ON snowflake_nodes TO PUBLIC;

-- Called by snowflake_next() as the extension's owner: inserts this server's claim when
-- none holds the node id (and the transaction may write), then gives the row holding the
-- node id and the first row of another server with another layout or epoch, each saying
-- whether this call wrote it. (Whether it wrote, not the row's xmin: read through Citus
-- or postgres_fdw, a row's xmin is another server's.)
-- Arguments: node id, system identifier, layout, epoch, whether it may write.
CREATE FUNCTION snowflake_claim_node(integer, bigint, text, text, boolean)
RETURNS TABLE (node_id integer, system_identifier bigint, server text, layout text,
               epoch text, claimed_at text, written boolean)
VOLATILE LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    wrote boolean := false;
BEGIN
    -- Planned only when run: a read-only transaction checks the claims without writing.
    IF $5 THEN
        INSERT INTO @extschema@.snowflake_nodes
            (node_id, system_identifier, server, layout, epoch, claimed_at)
        VALUES ($1, $2,
                coalesce(nullif(current_setting('cluster_name'), ''),
                         format('%s port %s', coalesce(host(inet_server_addr()), 'localhost'),
                                current_setting('port'))),
                $3, $4::timestamptz, now())
        ON CONFLICT DO NOTHING;
        wrote := FOUND;
    END IF;
    RETURN QUERY
        SELECT n.node_id, n.system_identifier, n.server, n.layout,
               to_char(n.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS+00'),
               to_char(n.claimed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS+00'),
               n.node_id = $1 AND wrote
        FROM @extschema@.snowflake_nodes n
        WHERE n.node_id = $1
           OR (n.system_identifier <> $2 AND (n.layout <> $3 OR n.epoch <> $4::timestamptz))
        ORDER BY n.node_id <> $1, n.node_id
        LIMIT 2;
END
$$;
REVOKE ALL ON FUNCTION snowflake_claim_node(integer, bigint, text, text, boolean) FROM PUBLIC;

-- Frees the claim of a retired server, so that another server may take its node id.
CREATE FUNCTION snowflake_release_node(node_id integer) RETURNS boolean
VOLATILE STRICT LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    WITH freed AS (
        DELETE FROM @extschema@.snowflake_nodes n WHERE n.node_id = $1 RETURNING 1
    )
    SELECT count(*) > 0 FROM freed;
$$;

-- snowflake_bounds(from_ts, to_ts): the id range of the time range [from_ts, to_ts), as
-- the bounds of a range partition on an id column: a partition FROM (lower) TO (upper)
-- holds exactly the ids minted in that time range (by snowflake_next() or snowflake_at()),
-- whatever the layout, since both ends are snowflake_floor(). PL/pgSQL, so the body is
-- resolved at call time, with the extension's schema fixed for snowflake_floor().
CREATE FUNCTION snowflake_bounds(from_ts timestamptz, to_ts timestamptz,
    OUT lower bigint, OUT upper bigint)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = @extschema@, pg_temp
AS $bounds$
BEGIN
  lower := snowflake_floor(from_ts);
  upper := snowflake_floor(to_ts);
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

-- snowflake_convert(tbl, col): moves a serial, bigserial or identity key column onto
-- DEFAULT snowflake_next(), in one transaction: the column and every foreign key column
-- that references it (directly or through other foreign keys) widened to bigint, the
-- sequence dropped so that no dump carries a sequence whose bounds no longer match the
-- column (the pg_dump/pg_restore breakage of sequence-based conversions), and every check
-- made before anything changes. One row per column changed.
--
-- snowflake_key_holders(tbl, col): the column and every column that holds its values
-- through foreign keys, to any depth (a child's key referenced by grandchildren, a
-- self-reference), each with its type and the constraints that make it one (NULL for the
-- column itself): what snowflake_convert widens, to look at first. Constraints that
-- partitions inherit are left out: an ALTER of the partitioned table reaches its partitions.
CREATE FUNCTION snowflake_key_holders(tbl regclass, col name,
    OUT rel regclass, OUT attname name, OUT type regtype, OUT via text)
RETURNS SETOF record
LANGUAGE sql STABLE STRICT PARALLEL SAFE
AS $holders$
  WITH RECURSIVE holders(rel, attnum, via) AS (
    SELECT a.attrelid, a.attnum, NULL::name
      FROM pg_catalog.pg_attribute a
     WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped
    UNION
    SELECT c.conrelid, c.conkey[array_position(c.confkey, h.attnum)], c.conname
      FROM holders h JOIN pg_catalog.pg_constraint c
        ON c.confrelid = h.rel AND h.attnum = ANY (c.confkey)
     WHERE c.contype = 'f' AND c.conparentid = 0
  )
  SELECT h.rel::regclass, a.attname, a.atttypid::regtype,
         string_agg(DISTINCT h.via, ', ' ORDER BY h.via)
    FROM holders h JOIN pg_catalog.pg_attribute a ON a.attrelid = h.rel AND a.attnum = h.attnum
   GROUP BY h.rel, a.attname, a.atttypid
$holders$;

COMMENT ON FUNCTION snowflake_key_holders(regclass, name) IS
    'The column and every column that holds its values through foreign keys, to any depth, with its type and the constraints: what snowflake_convert widens.';

-- PL/pgSQL, so the body is resolved at call time; the search_path is fixed to the
-- extension's schema so that snowflake_next() in the new default and snowflake_floor()
-- in the check are this extension's whatever the caller's search_path.
CREATE FUNCTION snowflake_convert(tbl regclass, col name)
RETURNS TABLE (table_name regclass, column_name name, change text)
LANGUAGE plpgsql
SET search_path = @extschema@, pg_temp
AS $convert$
DECLARE
  key_attnum smallint;
  key_type regtype;
  key_identity "char";
  seq regclass;
  seq_name text;
  default_expr text;
  default_seq regclass;
  other_users text;
  largest bigint;
  first_id bigint;
  rel regclass;
  alters text;
BEGIN
  IF tbl IS NULL OR col IS NULL THEN
    RAISE EXCEPTION 'snowflake_convert needs a table and a column, not NULL'
      USING ERRCODE = 'null_value_not_allowed';
  END IF;
  -- A partitioned table is left out: a key unique by itself must be its partition key,
  -- which no ALTER can widen, and each partition has a default of its own.
  IF (SELECT relkind FROM pg_class WHERE oid = tbl) = 'p' THEN
    RAISE EXCEPTION '% is a partitioned table', tbl
      USING ERRCODE = 'wrong_object_type',
            DETAIL = 'snowflake_convert converts the key of an ordinary table.';
  ELSIF (SELECT relkind FROM pg_class WHERE oid = tbl) <> 'r' THEN
    RAISE EXCEPTION '% is not a table', tbl
      USING ERRCODE = 'wrong_object_type';
  END IF;
  SELECT attnum, atttypid, attidentity INTO key_attnum, key_type, key_identity
    FROM pg_attribute WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'column "%" of table % does not exist', col, tbl
      USING ERRCODE = 'undefined_column';
  END IF;
  IF key_type NOT IN ('smallint', 'integer', 'bigint') THEN
    RAISE EXCEPTION 'column "%" of table % is of type %, not an integer key', col, tbl, key_type
      USING ERRCODE = 'datatype_mismatch',
            DETAIL = 'snowflake_convert converts a serial, bigserial or identity column.';
  END IF;

  -- What fills the column now: an identity, a default of nextval() on the sequence the
  -- column owns (serial, bigserial), or already snowflake_next().
  SELECT pg_get_expr(d.adbin, d.adrelid),
         (SELECT dep.refobjid::regclass FROM pg_depend dep JOIN pg_class s ON s.oid = dep.refobjid
           WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = d.oid
             AND dep.refclassid = 'pg_class'::regclass AND s.relkind = 'S')
    INTO default_expr, default_seq
    FROM pg_attrdef d WHERE d.adrelid = tbl AND d.adnum = key_attnum;
  IF EXISTS (SELECT FROM pg_attrdef d JOIN pg_depend dep ON dep.classid = 'pg_attrdef'::regclass
              AND dep.objid = d.oid AND dep.refclassid = 'pg_proc'::regclass
              AND dep.refobjid = 'snowflake_next()'::regprocedure
             WHERE d.adrelid = tbl AND d.adnum = key_attnum) THEN
    RAISE EXCEPTION 'column "%" of table % already defaults to snowflake_next()', col, tbl
      USING ERRCODE = 'object_not_in_prerequisite_state';
  END IF;
  seq := pg_get_serial_sequence(tbl::text, col);
  IF key_identity = '' AND default_seq IS NULL THEN
    RAISE EXCEPTION 'column "%" of table % is not a serial, bigserial or identity column', col, tbl
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = CASE WHEN default_expr IS NULL THEN 'It has no default.'
                          ELSE format('Its default is %s.', default_expr) END;
  END IF;
  IF key_identity = '' AND default_seq IS DISTINCT FROM seq THEN
    RAISE EXCEPTION 'the default of column "%" of table % takes its values from sequence %, which the column does not own',
        col, tbl, default_seq
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'snowflake_convert drops the sequence of the column, and only drops a sequence the column owns.',
            HINT = format('If nothing else uses it: ALTER SEQUENCE %s OWNED BY %s.%I; then convert again.',
                          default_seq, tbl, col);
  END IF;
  SELECT string_agg(format('%s.%I', d.adrelid::regclass, a.attname), ', ') INTO other_users
    FROM pg_depend dep JOIN pg_attrdef d ON d.oid = dep.objid
    JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
   WHERE dep.classid = 'pg_attrdef'::regclass AND dep.refobjid = seq
     AND (d.adrelid, d.adnum) <> (tbl::oid, key_attnum);
  IF other_users IS NOT NULL THEN
    RAISE EXCEPTION 'sequence % of column "%" of table % also fills %', seq, col, tbl, other_users
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'snowflake_convert drops the sequence of the column.';
  END IF;
  -- Ids must stay unique: the column must be a key by itself.
  IF NOT EXISTS (SELECT FROM pg_index WHERE indrelid = tbl AND indisunique AND indnkeyatts = 1
                  AND indkey[0] = key_attnum AND indexprs IS NULL AND indpred IS NULL) THEN
    RAISE EXCEPTION 'column "%" of table % is not a key', col, tbl
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'snowflake_convert converts a column that is the primary key, or unique, by itself.';
  END IF;

  -- Nobody writes while the old keys are compared with the new ids and the tables change.
  EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
  EXECUTE format('SELECT max(%I) FROM %s', col, tbl) INTO largest;
  first_id := snowflake_floor(now());
  IF largest >= first_id THEN
    RAISE EXCEPTION 'column "%" of table % holds %, which is not below the snowflake ids of now', col, tbl, largest
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = format('The first snowflake id of %s is %s: new ids could repeat existing ones.',
                            now(), first_id),
            HINT = 'Renumber the rows (docs/migrating.md shows how), or keep the sequence.';
  END IF;

  -- The identity or the serial's sequence goes first: a column cannot have both an
  -- identity and a default, and a sequence can only be dropped once no default uses it.
  seq_name := seq::text;
  IF key_identity <> '' THEN
    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
  END IF;
  EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT snowflake_next()', tbl, col);
  IF key_identity = '' THEN
    EXECUTE format('DROP SEQUENCE %s', seq);
  END IF;
  table_name := tbl;
  column_name := col;
  change := concat_ws('; ',
    CASE WHEN key_type <> 'bigint'::regtype THEN format('%s to bigint', key_type) END,
    format(CASE WHEN key_identity <> '' THEN 'identity dropped, with its sequence %s'
                ELSE 'sequence %s dropped' END, seq_name),
    'default snowflake_next()');
  RETURN NEXT;

  -- The columns that hold these keys through foreign keys: their rows go out first,
  -- with their types before the change.
  RETURN QUERY
    SELECT h.rel::regclass, h.attname,
           format(CASE WHEN h.type IN ('smallint', 'integer') THEN '%s to bigint, for foreign key %s'
                       ELSE '%s already, for foreign key %s' END, h.type, h.via)
      FROM snowflake_key_holders(tbl, col) h WHERE h.via IS NOT NULL
     ORDER BY h.rel::regclass::text, h.attname;
  -- One rewrite of each table, the key's own included.
  FOR rel, alters IN
    SELECT h.rel, string_agg(format('ALTER COLUMN %I TYPE bigint', h.attname), ', ')
      FROM snowflake_key_holders(tbl, col) h WHERE h.type IN ('smallint', 'integer')
     GROUP BY h.rel
  LOOP
    EXECUTE format('ALTER TABLE %s %s', rel, alters);
  END LOOP;
END
$convert$;

COMMENT ON FUNCTION snowflake_convert(regclass, name) IS
    'Moves a serial, bigserial or identity key onto DEFAULT snowflake_next(): the column and the foreign key columns that reference it widened to bigint, its sequence dropped; refuses if an existing value is not below the ids of now.';

CREATE FUNCTION snowflake_next(gene bigint) RETURNS bigint
    VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'snowflake_next_gene';

CREATE  FUNCTION "snowflake_compose"(
	"ts" timestamp with time zone, /* Option < TimestampWithTimeZone > */
	"node_id" INT, /* Option < i32 > */
	"backend_slot" INT, /* Option < i32 > */
	"sequence" INT, /* Option < i32 > */
	"gene" INT DEFAULT 0, /* Option < i32 > */
	"layout" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS bigint /* Option < i64 > */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'snowflake_compose_wrapper';

CREATE  FUNCTION "snowflake_decode"(
	"encoded" TEXT, /* & str */
	"form" TEXT DEFAULT 'base32' /* & str */
) RETURNS bigint /* i64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'snowflake_decode_wrapper';

CREATE  FUNCTION "snowflake_encode"(
	"id" bigint, /* i64 */
	"form" TEXT DEFAULT 'base32' /* & str */
) RETURNS TEXT /* String */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'snowflake_encode_wrapper';

CREATE  FUNCTION "snowflake_layout"() RETURNS TEXT /* String */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'snowflake_layout_wrapper';

CREATE  FUNCTION "snowflake_parse"(
	"id" bigint, /* i64 */
	"layout" TEXT /* & str */
) RETURNS snowflake_parts /* :: pgrx :: heap_tuple :: PgHeapTuple < '_, :: pgrx :: pgbox :: AllocatedByRust
> */
STRICT STABLE PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'snowflake_parse_as_wrapper';

CREATE  FUNCTION "snowflake_server_status"() RETURNS TABLE (
	"node_id" INT,  /* Option < i32 > */
	"node_source" TEXT,  /* & '_ str */
	"system_identifier" bigint,  /* i64 */
	"layout" TEXT,  /* String */
	"epoch" timestamp with time zone,  /* TimestampWithTimeZone */
	"preloaded" bool,  /* bool */
	"backends_minting" INT,  /* Option < i32 > */
	"high_water_mark" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"furthest_lead_ms" bigint,  /* i64 */
	"clock_steps_absorbed" bigint,  /* i64 */
	"clock_steps_refused" bigint,  /* i64 */
	"spent_tick_waits" bigint  /* i64 */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'snowflake_server_status_wrapper';

CREATE VIEW snowflake_status AS
SELECT s.*,
       EXISTS (SELECT FROM snowflake_nodes n
               WHERE n.node_id = s.node_id AND n.system_identifier = s.system_identifier)
           AS node_claimed
FROM snowflake_server_status() s;
GRANT SELECT ON snowflake_status TO PUBLIC;

COMMENT ON FUNCTION snowflake_next() IS
    'A new 64-bit id in the server''s layout (snowflake_layout(); by default 41 bits of ms since snowflake.epoch, 2 of node, 8 of backend slot, 12 of sequence). Use as a column default.';
COMMENT ON FUNCTION snowflake_next(bigint) IS
    'A new id whose gene field (its lowest bits) copies the low bits of a related key, so that id % 2^g = key % 2^g. Needs a layout with gene bits.';
COMMENT ON FUNCTION snowflake_floor(timestamptz) IS
    'The smallest id of the tick (ms by default) of a time: id >= snowflake_floor(a) AND id < snowflake_floor(b) selects the ids minted in [a, b).';
COMMENT ON FUNCTION snowflake_at(timestamptz, bigint) IS
    'A deterministic id: the tick of a time with a uid filling every bit below the time (0 to 4194303 by default). Keep such ids out of columns filled by snowflake_next().';
COMMENT ON FUNCTION snowflake_parse(bigint) IS
    'The parts of an id minted by snowflake_next(): time, node id, backend slot, worker id, sequence, gene.';
COMMENT ON FUNCTION snowflake_parse(bigint, text) IS
    'The parts of an id of another layout: a preset (default, js53, twitter, discord, instagram, sonyflake) or a spec such as ''time:41, node:5, slot:5, sequence:12, epoch:2015-01-01''.';
COMMENT ON FUNCTION snowflake_compose(timestamptz, integer, integer, integer, integer, text) IS
    'The id of the given parts, in the server''s layout or the one given: the exact inverse of snowflake_parse.';
COMMENT ON FUNCTION snowflake_layout() IS
    'The server''s layout, as a spec that snowflake_parse(id, layout) reads.';
COMMENT ON TYPE snowflake_parts IS
    'The parts of a snowflake id, as returned by snowflake_parse().';
COMMENT ON FUNCTION snowflake_encode(bigint, text) IS
    'An id as fixed-width text that sorts as the id does under COLLATE "C": base32 (Crockford''s, 13 characters, the default) or base62 (11 characters).';
COMMENT ON FUNCTION snowflake_decode(text, text) IS
    'The id of a text from snowflake_encode, in base32 (the default; either case, I and L read as 1, O as 0) or base62.';
