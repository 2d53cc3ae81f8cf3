-- Node claims and configuration. A node id names one database of one server here: the
-- slots that number a database's sessions are advisory locks, which PostgreSQL keeps per
-- database, so two databases of one server minting under one node id could hand out the
-- same ids. Hence two claims of a node id:
-- - snowflake_nodes, as the native's: one row per node id with the claiming server's
--   system identifier (and here its database), which catches two servers given one node
--   id wherever that table is shared (logical replication, a copy of the claims);
-- - a role of the server, snowflake_sql_node_<id>, NOLOGIN and without privileges, whose
--   comment names the database holding the node id: roles are the server's, so every
--   database sees them, and their names are unique, so of two databases claiming one node
--   id at once only one can create it. The installing role needs CREATEROLE for it, as
--   the master user of every managed service has (a plain ALTER DATABASE ... SET marker
--   would need a superuser's GRANT SET for a custom setting from PostgreSQL 15 on).
--   A role naming a database that no longer exists is a stale claim, taken over.

CREATE TABLE IF NOT EXISTS @extschema@.snowflake_nodes (
    node_id integer PRIMARY KEY,
    system_identifier bigint NOT NULL,
    server text NOT NULL,
    layout text NOT NULL,
    epoch timestamptz NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    database text NOT NULL
);
GRANT SELECT ON @extschema@.snowflake_nodes TO PUBLIC;
SELECT @extschema@.snowflake_sql_dump_with('@extschema@.snowflake_nodes', '');

-- snowflake_sql_system_identifier(): what initdb made unique for this server.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_system_identifier() RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
RETURN (SELECT system_identifier FROM pg_catalog.pg_control_system());

-- snowflake_sql_claim(settings, may_write): refuses when another database of this server,
-- or another server (in snowflake_nodes), holds the node id, or when a server sharing the
-- claims mints with another layout or epoch; else writes this database's claims where
-- they are missing and the transaction may write. Run as the installing role.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_claim(s @extschema@.snowflake_settings,
    may_write boolean)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  own bigint := @extschema@.snowflake_sql_system_identifier();
  own_db oid := (SELECT oid FROM pg_database WHERE datname = current_database());
  marker name := 'snowflake_sql_node_' || s.node_id;
  marker_text text := format('snowflake_sql: node %s is database %s (oid %s) of this server',
                             s.node_id, current_database(), own_db);
  holder oid;
  claim @extschema@.snowflake_nodes;
BEGIN
  SELECT substring(shobj_description(r.oid, 'pg_authid') FROM '\(oid ([0-9]+)\)')::oid INTO holder
    FROM pg_roles r WHERE r.rolname = marker;
  IF holder <> own_db AND EXISTS (SELECT FROM pg_database WHERE oid = holder) THEN
    RAISE EXCEPTION 'node id % is claimed by database "%" of this server', s.node_id,
        (SELECT datname FROM pg_database WHERE oid = holder)
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'The SQL edition numbers the sessions of each database apart: two databases of one server minting under one node id could hand out the same ids.',
            HINT = format('Give this database a node id no other database or server holds: SELECT snowflake_configure(node_id => ...). If that database no longer mints, DROP ROLE %I frees the node id.', marker);
  END IF;
  SELECT * INTO claim FROM @extschema@.snowflake_nodes n WHERE n.node_id = s.node_id;
  IF FOUND AND claim.system_identifier <> own THEN
    RAISE EXCEPTION 'node id % is claimed by another server', s.node_id
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = format('Server "%s" (system identifier %s) claimed it in snowflake_nodes at %s. This server''s system identifier is %s.',
                            claim.server, claim.system_identifier,
                            to_char(claim.claimed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS+00'), own),
            HINT = format('Give this database a node id no other server holds (snowflake_configure). If that server is retired for good, free its claim with SELECT snowflake_release_node(%s).', s.node_id);
  END IF;
  IF FOUND AND claim.database <> current_database() THEN
    RAISE EXCEPTION 'node id % is claimed by database "%" of this server', s.node_id, claim.database
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'The SQL edition numbers the sessions of each database apart: two databases of one server minting under one node id could hand out the same ids.',
            HINT = format('Give this database another node id (snowflake_configure), or free the claim with SELECT snowflake_release_node(%s) if that database no longer mints.', s.node_id);
  END IF;
  SELECT * INTO claim FROM @extschema@.snowflake_nodes n
   WHERE n.system_identifier <> own AND (n.layout <> s.layout OR n.epoch <> s.epoch)
   ORDER BY n.node_id LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'this server''s layout or epoch differs from that of node %', claim.node_id
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = format('Server "%s" (system identifier %s) mints with layout ''%s'' and epoch %s; this server with layout ''%s'' and epoch %s.',
                            claim.server, claim.system_identifier, claim.layout,
                            @extschema@.snowflake_sql_format_ms(@extschema@.snowflake_sql_ms_of(claim.epoch)),
                            s.layout, @extschema@.snowflake_sql_format_ms(s.epoch_ms)),
            HINT = 'Every server sharing an id space must mint with the same layout and epoch.';
  END IF;
  IF NOT may_write THEN
    RETURN;
  END IF;
  INSERT INTO @extschema@.snowflake_nodes
      (node_id, system_identifier, server, layout, epoch, claimed_at, database)
  VALUES (s.node_id, own,
          coalesce(nullif(current_setting('cluster_name'), ''),
                   format('%s port %s', coalesce(host(inet_server_addr()), 'localhost'),
                          current_setting('port'))),
          s.layout, s.epoch, now(), current_database())
  ON CONFLICT DO NOTHING;
  IF holder IS DISTINCT FROM own_db THEN
    -- One claimer at a time in this database; another database's claimer of the same
    -- node id meets the role's unique name.
    PERFORM pg_advisory_xact_lock(1936617336, s.node_id);
    BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = marker) THEN
        EXECUTE format('CREATE ROLE %I NOLOGIN', marker);
      END IF;
      EXECUTE format('COMMENT ON ROLE %I IS %L', marker, marker_text);
    EXCEPTION
      WHEN insufficient_privilege THEN
        RAISE WARNING 'node id % is claimed in this database only: the installing role cannot create or comment role %', s.node_id, marker
          USING DETAIL = 'Other databases of this server cannot see the claim, so they cannot refuse the same node id.',
                HINT = 'Install as a role with CREATEROLE (a managed service''s master user has it).';
      WHEN duplicate_object OR unique_violation THEN
        RAISE EXCEPTION 'node id % is claimed by another database of this server', s.node_id
          USING ERRCODE = 'object_not_in_prerequisite_state',
                HINT = 'Give this database a node id no other database or server holds: SELECT snowflake_configure(node_id => ...).';
    END;
  END IF;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_claim(@extschema@.snowflake_settings, boolean) FROM PUBLIC;

-- snowflake_configure(node_id, layout, epoch, max_lead_ms): sets what is given, keeps the
-- rest, checks every value as the native checks its settings, and claims the node id.
-- Only the installing role may run it (or a role it grants EXECUTE to): a plain role can
-- neither change the settings nor mint as another node. The layout and the epoch change
-- the meaning of every id, so they may change only while no id has been minted.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_configure(node_id integer DEFAULT NULL,
    layout text DEFAULT NULL, epoch text DEFAULT NULL, max_lead_ms integer DEFAULT NULL)
RETURNS @extschema@.snowflake_settings
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  cur @extschema@.snowflake_settings := @extschema@.snowflake_sql_settings();
  new @extschema@.snowflake_settings;
BEGIN
  new := @extschema@.snowflake_sql_settings_row(true, coalesce(node_id, cur.node_id),
      coalesce(layout, cur.layout),
      coalesce(epoch, to_char(cur.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
      coalesce(max_lead_ms, cur.max_lead_ms));
  IF (new.layout, new.epoch_ms) IS DISTINCT FROM (cur.layout, cur.epoch_ms)
     AND @extschema@.snowflake_sql_minted() THEN
    RAISE EXCEPTION 'ids have been minted under layout ''%'' and epoch %; the layout and the epoch cannot change',
        cur.layout, @extschema@.snowflake_sql_format_ms(cur.epoch_ms)
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'Another layout or epoch misparses the ids minted already, and can mint them again.';
  END IF;
  DELETE FROM @extschema@.snowflake_settings s WHERE s.configured;
  INSERT INTO @extschema@.snowflake_settings SELECT new.*;
  -- snowflake_next() carries the settings in its code (60_next.sql): made again.
  PERFORM @extschema@.snowflake_sql_compile(new);
  IF new.node_id <> cur.node_id THEN
    -- This database no longer mints under its old node id.
    DELETE FROM @extschema@.snowflake_nodes n
     WHERE n.node_id = cur.node_id AND n.system_identifier = @extschema@.snowflake_sql_system_identifier()
       AND n.database = current_database();
    IF substring(shobj_description((SELECT oid FROM pg_roles WHERE rolname = 'snowflake_sql_node_' || cur.node_id),
                                   'pg_authid') FROM '\(oid ([0-9]+)\)')::oid
       = (SELECT oid FROM pg_database WHERE datname = current_database()) THEN
      BEGIN
        EXECUTE format('DROP ROLE %I', 'snowflake_sql_node_' || cur.node_id);
      EXCEPTION WHEN insufficient_privilege OR dependent_objects_still_exist THEN
        NULL; -- the claim stays; another database then sees it as this database's
      END;
    END IF;
  END IF;
  PERFORM @extschema@.snowflake_sql_claim(new, true);
  RETURN new;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_configure(integer, text, text, integer) FROM PUBLIC;

-- snowflake_release_node(node_id): frees the claim of a retired server or database, so
-- that another may take its node id. Run with the caller's rights, as the native's.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_release_node(node_id integer) RETURNS boolean
VOLATILE STRICT LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    WITH freed AS (
        DELETE FROM @extschema@.snowflake_nodes n WHERE n.node_id = $1 RETURNING 1
    )
    SELECT count(*) > 0 FROM freed;
$$;

-- Claims at install: a conflict is a warning here (the install goes on) and an error at
-- the first id, with the same words, until snowflake_configure gives a free node id.
DO $claim$
BEGIN
  PERFORM @extschema@.snowflake_sql_claim(@extschema@.snowflake_sql_settings(), true);
EXCEPTION WHEN object_not_in_prerequisite_state THEN
  RAISE WARNING '%', SQLERRM USING HINT = 'Give this database a free node id with SELECT snowflake_configure(node_id => ...) before minting.';
END
$claim$;
