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
SET search_path = pg_catalog, pg_temp
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

-- PL/pgSQL, so the body is resolved at call time, under a search_path of pg_catalog
-- alone: no function or operator of another schema (the caller's, or one that other roles
-- may create in) can stand in for a built-in one. The extension's own functions are named
-- with its schema.
CREATE FUNCTION snowflake_convert(tbl regclass, col name)
RETURNS TABLE (table_name regclass, column_name name, change text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
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
              AND dep.refobjid = '@extschema@.snowflake_next()'::regprocedure
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
  first_id := @extschema@.snowflake_floor(now());
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
  EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT @extschema@.snowflake_next()', tbl, col);
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
      FROM @extschema@.snowflake_key_holders(tbl, col) h WHERE h.via IS NOT NULL
     ORDER BY h.rel::regclass::text, h.attname;
  -- One rewrite of each table, the key's own included.
  FOR rel, alters IN
    SELECT h.rel, string_agg(format('ALTER COLUMN %I TYPE bigint', h.attname), ', ')
      FROM @extschema@.snowflake_key_holders(tbl, col) h WHERE h.type IN ('smallint', 'integer')
     GROUP BY h.rel
  LOOP
    EXECUTE format('ALTER TABLE %s %s', rel, alters);
  END LOOP;
END
$convert$;

COMMENT ON FUNCTION snowflake_convert(regclass, name) IS
    'Moves a serial, bigserial or identity key onto DEFAULT snowflake_next(): the column and the foreign key columns that reference it widened to bigint, its sequence dropped; refuses if an existing value is not below the ids of now.';
