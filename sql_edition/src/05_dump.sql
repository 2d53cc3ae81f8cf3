-- snowflake_sql_dump_with(rel, filter): marks table or sequence rel of the edition for
-- pg_dump (with the rows that filter keeps) when this runs as an extension script (CREATE
-- EXTENSION, through pg_tle or not), whose own tables a dump would otherwise leave out; a
-- psql -f install is plain objects, dumped with the database anyway.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_dump_with(rel regclass, filter text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF EXISTS (SELECT FROM pg_catalog.pg_depend
              WHERE classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND objid = rel AND deptype = 'e') THEN
    PERFORM pg_catalog.pg_extension_config_dump(rel, filter);
  END IF;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_dump_with(regclass, text) FROM PUBLIC;
