-- Node claims and configuration. The slots that number a database's sessions are advisory
-- locks, which PostgreSQL keeps per database: two databases of one server minting under
-- one slot of one node id could hand out the same ids. So a database claims a node id and
-- a range of its slots: all of them by default, a part with snowflake_configure(slots =>
-- ...), so that databases of one server can share a node id under disjoint ranges and a
-- server with more minting databases than the layout has node ids still has room. A node
-- id is still one server's. Two claims:
-- - snowflake_nodes, as the native's: a row per node id and claiming database, with the
--   server's system identifier and the range (NULL: the whole node). It catches two
--   servers given one node id wherever that table is shared (logical replication, a copy
--   of the claims), and in a copy of another database's claims (CREATE DATABASE ...
--   TEMPLATE, a restore under another name) the slots that database holds;
-- - a role of the server per claim, NOLOGIN and without privileges:
--   snowflake_sql_node_<id> for the whole node, snowflake_sql_node_<id>_slots_<first>_<last>
--   for a range. Its comment names the holding database by oid (first, so that no database
--   name can pass for another's oid; as "(oid N)", which an earlier release reads too),
--   its layout and epoch, and its name. Roles are the server's, so every database sees
--   every claim. The installing role needs CREATEROLE for them, as the master user of
--   every managed service has (a plain ALTER DATABASE ... SET marker would need a
--   superuser's GRANT SET for a custom setting from PostgreSQL 15 on). A role naming a
--   database that no longer exists is a stale claim, taken over.
-- Claims of one node id are made one at a time across the server, so that of two
-- databases claiming overlapping ranges at once the second sees the first's claim and is
-- refused. Advisory locks cannot order them (they are per database); a role can: a claim
-- creates the role snowflake_sql_claiming_node_<id> and drops it in its transaction, and
-- another transaction's CREATE ROLE of that name waits on pg_authid's unique index until
-- the first ends, then succeeds, the row being gone. Only READ COMMITTED reads the claims
-- after that wait (REPEATABLE READ keeps its first snapshot), so a claim that writes
-- refuses to run under another isolation level.

CREATE TABLE IF NOT EXISTS @extschema@.snowflake_nodes (
    node_id integer NOT NULL,
    system_identifier bigint NOT NULL,
    server text NOT NULL,
    layout text NOT NULL,
    epoch timestamptz NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    database text NOT NULL,
    -- The node's slots the database claims, first to last; NULL, the whole node (as in
    -- the rows of an earlier release, which brought one row per node id and no range).
    first_slot integer,
    last_slot integer,
    PRIMARY KEY (node_id, system_identifier, database)
);
DO $claim_columns$
DECLARE
  node_key name := (SELECT c.conname FROM pg_catalog.pg_constraint c
                     WHERE c.conrelid = '@extschema@.snowflake_nodes'::pg_catalog.regclass
                       AND c.contype = 'p' AND pg_catalog.array_length(c.conkey, 1) = 1);
BEGIN
  -- An install of an earlier release: one row per node id, which databases sharing a
  -- node id outgrow; the range columns at the end, where a new install has them.
  IF node_key IS NOT NULL THEN
    EXECUTE pg_catalog.format('ALTER TABLE @extschema@.snowflake_nodes DROP CONSTRAINT %I,
        ADD PRIMARY KEY (node_id, system_identifier, database),
        ADD COLUMN first_slot integer, ADD COLUMN last_slot integer', node_key);
  END IF;
END
$claim_columns$;
GRANT SELECT ON @extschema@.snowflake_nodes TO PUBLIC;
SELECT @extschema@.snowflake_sql_dump_with('@extschema@.snowflake_nodes', '');

-- snowflake_sql_system_identifier(): what initdb made unique for this server.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_system_identifier() RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
RETURN (SELECT system_identifier FROM pg_catalog.pg_control_system());

-- snowflake_sql_claimed_slots(settings): the slots of the node id a database claims: its
-- range, or unbounded for all of the layout's slots (the whole node), as its role's name
-- and its row of snowflake_nodes say, and as a claim of an earlier release reads. Open to
-- PUBLIC: the status view, which any role reads, compares claims with it.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_claimed_slots(s @extschema@.snowflake_settings)
RETURNS int4range LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN s.first_slot = 0 AND s.last_slot = (1 << s.slot_bits) - 1 THEN pg_catalog.int4range(NULL, NULL)
            ELSE pg_catalog.int4range(s.first_slot, s.last_slot, '[]') END;

-- snowflake_sql_claim_role(settings): the role that holds a database's claim.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_claim_role(s @extschema@.snowflake_settings)
RETURNS name LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN pg_catalog.lower_inf(@extschema@.snowflake_sql_claimed_slots(s))
            THEN pg_catalog.format('snowflake_sql_node_%s', s.node_id)
            ELSE pg_catalog.format('snowflake_sql_node_%s_slots_%s_%s', s.node_id, s.first_slot, s.last_slot) END::name;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_claim_role(@extschema@.snowflake_settings) FROM PUBLIC;

-- snowflake_sql_node_claims(node_id): the claim roles of a node id on this server: the
-- role, the database it names (oid and name; NULL when that database no longer exists or
-- the comment names none), its slots (unbounded: the whole node), its layout and epoch
-- (NULL in the comment of an earlier release, whose claims were of whole nodes).
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_node_claims(node_id integer)
RETURNS TABLE (role name, holder oid, database name, slots int4range, layout text, epoch_ms bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp AS $$
  SELECT r.rolname, d.oid, d.datname,
         CASE WHEN r.n[2] IS NULL THEN int4range(NULL, NULL) ELSE int4range(r.n[2]::integer, r.n[3]::integer, '[]') END,
         r.c[2], r.c[3]::bigint
    FROM (SELECT a.rolname, n,
                 coalesce(regexp_match(t, '^snowflake_sql: database \(oid ([0-9]{1,10})\) of this server holds node [0-9]+, slots [0-9]+-[0-9]+ \(layout ''([^'']*)'', epoch ([0-9]{1,18}) ms\)'),
                          regexp_match(t, '\(oid ([0-9]{1,10})\) of this server$')) AS c
            FROM pg_roles a,
                 regexp_match(a.rolname, '^snowflake_sql_node_([0-9]+)(?:_slots_([0-9]{1,4})_([0-9]{1,4}))?$') n,
                 shobj_description(a.oid, 'pg_authid') t
           WHERE n[1] = $1::text) r
    LEFT JOIN pg_database d ON d.oid::text = r.c[1]
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_node_claims(integer) FROM PUBLIC;

-- snowflake_sql_refuse_claim(settings, database, slots, free): the error of a claim of
-- slots that another database of this server holds (slots: its claim's; unbounded, the
-- whole node); free says what frees that claim once its database no longer mints.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_refuse_claim(s @extschema@.snowflake_settings,
    holder text, held int4range, free text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RAISE EXCEPTION '%', CASE WHEN lower_inf(held)
      THEN format('node id %s is claimed by database "%s" of this server', s.node_id, holder)
      ELSE format('slots %s-%s of node id %s are claimed by database "%s" of this server',
                  lower(held), upper(held) - 1, s.node_id, holder) END
    USING ERRCODE = 'object_not_in_prerequisite_state',
          DETAIL = format('This database asks for slots %s-%s of it. The SQL edition numbers the sessions of each database apart: two databases of one server minting under one slot of one node id could hand out the same ids.',
                          s.first_slot, s.last_slot),
          HINT = format('Give this database slots of node id %s that no other database holds, or a node id no other database or server holds: SELECT snowflake_configure(node_id => ..., slots => ...). If that database no longer mints, %s frees its claim.',
                        s.node_id, free);
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_refuse_claim(@extschema@.snowflake_settings, text, int4range, text) FROM PUBLIC;

-- snowflake_sql_claim(settings, may_write): refuses when another database of this server
-- holds slots of the node id that this database asks for, or mints under it with another
-- layout or epoch; when another server (in snowflake_nodes) holds the node id; or when a
-- server sharing the claims mints with another layout or epoch. Else writes this
-- database's claims where they are missing and the transaction may write. Run as the
-- installing role.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_claim(s @extschema@.snowflake_settings,
    may_write boolean)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  own bigint := @extschema@.snowflake_sql_system_identifier();
  own_db oid := (SELECT oid FROM pg_database WHERE datname = current_database());
  slots constant int4range := @extschema@.snowflake_sql_claimed_slots(s);
  marker constant name := @extschema@.snowflake_sql_claim_role(s);
  marker_text constant text := format('snowflake_sql: database (oid %s) of this server holds node %s, slots %s-%s (layout %L, epoch %s ms); its name: %s',
                                      own_db, s.node_id, s.first_slot, s.last_slot, s.layout, s.epoch_ms, current_database());
  -- The role in place, its comment as this database's claim writes it: else claimed again
  -- (a comment of an earlier release, another layout, a database renamed or one whose
  -- stale claim it takes over).
  in_place constant boolean := shobj_description((SELECT oid FROM pg_roles WHERE rolname = marker), 'pg_authid')
                               IS NOT DISTINCT FROM marker_text;
  serialized boolean := false;
  other record;
  claim @extschema@.snowflake_nodes;
BEGIN
  IF NOT in_place THEN
    IF may_write THEN
      BEGIN
        EXECUTE format('CREATE ROLE %I NOLOGIN', 'snowflake_sql_claiming_node_' || s.node_id);
        EXECUTE format('DROP ROLE %I', 'snowflake_sql_claiming_node_' || s.node_id);
        serialized := true;
      EXCEPTION WHEN insufficient_privilege THEN
        NULL; -- no role can be written: the claim is this database's only, as warned below
      END;
      IF serialized AND current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'node id % cannot be claimed in a % transaction', s.node_id,
            upper(current_setting('transaction_isolation'))
          USING ERRCODE = 'object_not_in_prerequisite_state',
                DETAIL = 'A claim must read the other databases'' claims as the claims made before it left them, which only a READ COMMITTED transaction sees.',
                HINT = 'Run snowflake_configure, or the session''s first snowflake_next(), in a READ COMMITTED transaction (the default).';
      END IF;
    END IF;
    FOR other IN SELECT * FROM @extschema@.snowflake_sql_node_claims(s.node_id) c ORDER BY c.role LOOP
      IF other.holder <> own_db THEN
        IF other.slots && slots THEN
          PERFORM @extschema@.snowflake_sql_refuse_claim(s, other.database, other.slots,
              format('DROP ROLE %I', other.role));
        END IF;
        IF (other.layout, other.epoch_ms) IS DISTINCT FROM (s.layout, s.epoch_ms) AND other.layout IS NOT NULL THEN
          RAISE EXCEPTION 'database "%" of this server mints under node id % with another layout or epoch', other.database, s.node_id
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('It mints with layout ''%s'' and epoch %s; this database would with layout ''%s'' and epoch %s. Ids of one node id must parse alike.',
                                  other.layout, @extschema@.snowflake_sql_format_ms(other.epoch_ms),
                                  s.layout, @extschema@.snowflake_sql_format_ms(s.epoch_ms)),
                  HINT = 'Give this database that layout and epoch (before its first id), or a node id of its own (snowflake_configure).';
        END IF;
      ELSIF may_write AND other.role <> marker AND (other.holder = own_db OR other.slots && slots) THEN
        -- This database's claim of other slots, which it no longer mints under, or a stale
        -- claim in the way: dropped, where the installing role may.
        BEGIN
          EXECUTE format('DROP ROLE %I', other.role);
        EXCEPTION WHEN insufficient_privilege OR dependent_objects_still_exist THEN
          NULL; -- it names no live database but this one, so it refuses none
        END;
      END IF;
    END LOOP;
  END IF;
  SELECT * INTO claim FROM @extschema@.snowflake_nodes n
   WHERE n.node_id = s.node_id AND n.system_identifier <> own ORDER BY n.claimed_at LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'node id % is claimed by another server', s.node_id
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = format('Server "%s" (system identifier %s) claimed it in snowflake_nodes at %s. This server''s system identifier is %s.',
                            claim.server, claim.system_identifier,
                            to_char(claim.claimed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS+00'), own),
            HINT = format('Give this database a node id no other server holds (snowflake_configure). If that server is retired for good, free its claim with SELECT snowflake_release_node(%s).', s.node_id);
  END IF;
  -- A row of another database of this server: a copy of its claims.
  SELECT * INTO claim FROM @extschema@.snowflake_nodes n
   WHERE n.node_id = s.node_id AND n.database <> current_database()
     AND int4range(n.first_slot, n.last_slot, '[]') && slots
   ORDER BY n.database LIMIT 1;
  IF FOUND THEN
    PERFORM @extschema@.snowflake_sql_refuse_claim(s, claim.database, int4range(claim.first_slot, claim.last_slot, '[]'),
        format('SELECT snowflake_release_node(%s)', s.node_id));
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
      (node_id, system_identifier, server, layout, epoch, claimed_at, database, first_slot, last_slot)
  VALUES (s.node_id, own,
          coalesce(nullif(current_setting('cluster_name'), ''),
                   format('%s port %s', coalesce(host(inet_server_addr()), 'localhost'),
                          current_setting('port'))),
          s.layout, s.epoch, now(), current_database(), lower(slots), upper(slots) - 1)
  ON CONFLICT DO NOTHING;
  IF NOT in_place THEN
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
    END;
  END IF;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_claim(@extschema@.snowflake_settings, boolean) FROM PUBLIC;

-- snowflake_sql_give_up_slots(settings, slots): readies slots that this database stops
-- minting under (snowflake_configure narrowed its range) for another database to claim.
-- Refused while a session holds one: its code would have no sequence for the slot, and
-- each of its calls would fail. Else each is locked until the change commits, so that no
-- session takes one meanwhile, and the change waits until the clock has passed their last
-- ids (the lead bound ahead of it at most, or the margin of a new server life more), so
-- that another database minting under them later mints above those ids.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_give_up_slots(s @extschema@.snowflake_settings,
    slots integer[])
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  held text;
  excess_ms bigint;
BEGIN
  SELECT string_agg(format('%s (process %s)', l.objid, l.pid), ', ' ORDER BY l.objid) INTO held
    FROM pg_locks l
   WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.classid = 1936617335 AND l.objsubid = 2 AND l.granted AND l.objid = ANY (slots::oid[]);
  IF held IS NULL THEN
    SELECT string_agg(i::text, ', ' ORDER BY i) INTO held
      FROM unnest(slots) i WHERE NOT pg_try_advisory_xact_lock(1936617335, i);
  END IF;
  IF held IS NOT NULL THEN
    RAISE EXCEPTION 'sessions of database "%" hold slots that it would give up', current_database()
      USING ERRCODE = 'object_in_use',
            DETAIL = format('Slots held until their sessions end: %s. The next id of such a session would find no slot.', held),
            HINT = 'End those sessions (or let their pool close them), then configure again.';
  END IF;
  SELECT (((max(pg_sequence_last_value(@extschema@.snowflake_sql_slot_sequence(i))) >> s.sequence_bits) + 1) * s.unit_ms + s.epoch_ms)
         - round(date_part('epoch', clock_timestamp()) * 1000000)::bigint / 1000
    INTO excess_ms FROM unnest(slots) i;
  IF excess_ms > s.max_lead_ms + 1000 THEN
    RAISE EXCEPTION 'the system clock is % ms behind the last snowflake id of the slots this database gives up', excess_ms
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'Another database minting under them must mint above that id.',
            HINT = 'Retry once the clock has caught up.';
  ELSIF excess_ms > 0 THEN
    PERFORM pg_sleep(excess_ms / 1000.0);
  END IF;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_give_up_slots(@extschema@.snowflake_settings, integer[]) FROM PUBLIC;

-- snowflake_sql_reorder(settings): readies a database that has minted in the worker-first
-- order of a layout (0.3.0's default, 'time:41, node:2, slot:8, sequence:12') to mint in
-- the order where the sequence sits right below the time (snowflake_configure). Two ids of
-- one tick, one in each order, can be equal, so no tick may hold ids of both, and
-- snowflake_parse must know which order an id has. Returns the start of the first tick of
-- the new order, which the settings keep as reordered_at: ids of earlier ticks parse in
-- the worker-first order, and none is minted before it.
-- - Refused while another session of the database holds a slot: the code it runs was made
--   for the old order, and would go on minting in it. Every slot of the range is locked
--   until the change commits, so that no session takes one meanwhile; a session that takes
--   one later runs code made from the new settings (snowflake_sql_take_slot's checks).
-- - The first tick of the new order lies past every slot's last pair, which may be up to
--   the lead bound ahead of the clock (waited out, as snowflake_sql_give_up_slots does),
--   and at the clock.
-- - Every slot's sequence is raised to the pair just below that tick, so that no slot mints
--   before it, even under a clock that steps back later (within the lead bound).
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_reorder(s @extschema@.snowflake_settings)
RETURNS timestamptz LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  held text;
  first_tick bigint;
  excess_ms bigint;
BEGIN
  SELECT string_agg(format('%s (process %s)', l.objid, l.pid), ', ' ORDER BY l.objid) INTO held
    FROM pg_locks l
   WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.classid = 1936617335 AND l.objsubid = 2 AND l.granted AND l.pid <> pg_backend_pid();
  IF held IS NULL THEN
    SELECT string_agg(i::text, ', ' ORDER BY i) INTO held
      FROM generate_series(s.first_slot, s.last_slot) i WHERE NOT pg_try_advisory_xact_lock(1936617335, i);
  END IF;
  IF held IS NOT NULL THEN
    RAISE EXCEPTION 'sessions of database "%" hold slots: the order of its ids cannot change while they mint', current_database()
      USING ERRCODE = 'object_in_use',
            DETAIL = format('Slots held until their sessions end: %s. Their code mints in the order of layout ''%s'', and an id of that order can equal one of the new order minted in the same tick.', held, s.layout),
            HINT = 'Stop the applications that mint ids in this database (or end those sessions), then configure again.';
  END IF;
  -- Past every slot's last pair, those of slots the database minted under before a change
  -- of its range included; at the clock.
  SELECT greatest((max(pg_sequence_last_value(@extschema@.snowflake_sql_slot_sequence(i))) >> s.sequence_bits) + 1,
                  (round(date_part('epoch', clock_timestamp()) * 1000000)::bigint / 1000 - s.epoch_ms) / s.unit_ms)
    INTO first_tick FROM generate_series(0, 1023) i;
  excess_ms := first_tick * s.unit_ms + s.epoch_ms - round(date_part('epoch', clock_timestamp()) * 1000000)::bigint / 1000;
  IF excess_ms > s.max_lead_ms + 1000 THEN
    RAISE EXCEPTION 'the system clock is % ms behind the last snowflake id of this database', excess_ms
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'The first id of the new order must lie above it.',
            HINT = 'Retry once the clock has caught up.';
  ELSIF excess_ms > 0 THEN
    PERFORM pg_sleep(excess_ms / 1000.0);
  END IF;
  FOR i IN 0 .. 1023 LOOP
    PERFORM setval(@extschema@.snowflake_sql_slot_sequence(i), (first_tick << s.sequence_bits) - 1);
  END LOOP;
  RETURN timestamptz '1970-01-01 00:00:00+00' + (first_tick * s.unit_ms + s.epoch_ms) * interval '1 millisecond';
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_reorder(@extschema@.snowflake_settings) FROM PUBLIC;

-- snowflake_configure(node_id, layout, epoch, max_lead_ms, slots, follow_clock): sets
-- what is given, keeps the rest, checks every value as the native checks its settings,
-- and claims the node id's slots. Only the installing role may run it (or a role it
-- grants EXECUTE to): a plain role can neither change the settings nor mint as another
-- node. The layout and the epoch change the meaning of every id, so they may change only
-- while no id has been minted; but for one move, from the worker-first order of a layout
-- to the layout's own (snowflake_sql_reorder), once: the settings keep when it happened,
-- and every id keeps its meaning. follow_clock changes only how far ids follow the clock
-- inside a tick (60_next.sql), which every id's meaning and uniqueness allow at any time;
-- left out, it stays off where it was turned off, and else takes the new layout's default
-- (on where the layout can follow the clock).
CREATE OR REPLACE FUNCTION @extschema@.snowflake_configure(node_id integer DEFAULT NULL,
    layout text DEFAULT NULL, epoch text DEFAULT NULL, max_lead_ms integer DEFAULT NULL,
    slots text DEFAULT NULL, follow_clock boolean DEFAULT NULL)
RETURNS @extschema@.snowflake_settings
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  cur @extschema@.snowflake_settings := @extschema@.snowflake_sql_settings();
  new @extschema@.snowflake_settings;
  leaving integer[];
  -- The layout that a database minting in a worker-first order may move to.
  proposal constant text := @extschema@.snowflake_sql_clock_first(cur.layout);
  refused text;
BEGIN
  new := @extschema@.snowflake_sql_settings_row(true, coalesce(node_id, cur.node_id),
      coalesce(layout, cur.layout),
      coalesce(epoch, to_char(cur.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
      coalesce(max_lead_ms, cur.max_lead_ms),
      -- Left out, the slots stay; all of them stay all, whatever the layout numbers.
      coalesce(slots, CASE WHEN pg_catalog.lower_inf(@extschema@.snowflake_sql_claimed_slots(cur)) THEN 'all'
                           ELSE format('%s-%s', cur.first_slot, cur.last_slot) END));
  IF follow_clock IS NOT NULL THEN
    new.follow_clock := follow_clock;
  ELSIF cur.follow_clock IS DISTINCT FROM @extschema@.snowflake_sql_follows_clock(cur.layout) THEN
    new.follow_clock := cur.follow_clock;
  END IF;
  IF new.follow_clock AND NOT @extschema@.snowflake_sql_follows_clock(new.layout) THEN
    RAISE EXCEPTION 'ids of layout ''%'' cannot follow the clock inside a tick', new.layout
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'follow_clock needs the sequence to be the field right below the time.',
            HINT = 'Give follow_clock => false with this layout (docs/managed.md, "The order of ids").';
  END IF;
  IF (new.layout, new.epoch_ms) IS NOT DISTINCT FROM (cur.layout, cur.epoch_ms) THEN
    new.reordered_at := cur.reordered_at;
  ELSIF NOT @extschema@.snowflake_sql_minted() THEN
    new.reordered_at := NULL;
  ELSIF new.epoch_ms = cur.epoch_ms AND cur.reordered_at IS NULL
        AND @extschema@.snowflake_sql_follows_clock(new.layout)
        AND @extschema@.snowflake_sql_worker_first(new.layout) = cur.layout THEN
    -- The claims checked first: the sequences that the move raises stay raised whatever
    -- refuses the change after it.
    PERFORM @extschema@.snowflake_sql_claim(new, false);
    new.reordered_at := @extschema@.snowflake_sql_reorder(cur);
  ELSE
    refused := format('ids have been minted under layout ''%s'' and epoch %s; the layout and the epoch cannot change',
                      cur.layout, @extschema@.snowflake_sql_format_ms(cur.epoch_ms));
    IF cur.reordered_at IS NULL AND @extschema@.snowflake_sql_follows_clock(proposal)
       AND @extschema@.snowflake_sql_worker_first(proposal) = cur.layout THEN
      RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state', MESSAGE = refused,
            DETAIL = 'Another layout or epoch misparses the ids minted already, and can mint them again.',
            HINT = format('The one change allowed moves the sequence right below the time, which keeps the meaning of every id: layout => ''%s'' (docs/managed.md, "The order of ids").', proposal);
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state', MESSAGE = refused,
          DETAIL = 'Another layout or epoch misparses the ids minted already, and can mint them again.';
  END IF;
  leaving := ARRAY(SELECT i FROM generate_series(cur.first_slot, cur.last_slot) i
                    WHERE i NOT BETWEEN new.first_slot AND new.last_slot);
  IF leaving <> '{}' THEN
    PERFORM @extschema@.snowflake_sql_give_up_slots(cur, leaving);
  END IF;
  DELETE FROM @extschema@.snowflake_settings s WHERE s.configured;
  INSERT INTO @extschema@.snowflake_settings SELECT new.*;
  -- The defaults row written again, unchanged: with the configured row deleted, every row
  -- a transaction's snapshot may hold is changed, and a REPEATABLE READ transaction begun
  -- before this one commits fails to take a slot under the old settings
  -- (snowflake_sql_take_slot) rather than mint under them.
  UPDATE @extschema@.snowflake_settings s SET configured = s.configured WHERE NOT s.configured;
  -- snowflake_next() carries the settings in its code (60_next.sql): made again.
  PERFORM @extschema@.snowflake_sql_compile(new);
  IF (new.node_id, @extschema@.snowflake_sql_claimed_slots(new))
     IS DISTINCT FROM (cur.node_id, @extschema@.snowflake_sql_claimed_slots(cur)) THEN
    -- This database no longer mints under its old claim.
    DELETE FROM @extschema@.snowflake_nodes n
     WHERE n.node_id = cur.node_id AND n.system_identifier = @extschema@.snowflake_sql_system_identifier()
       AND n.database = current_database();
    IF EXISTS (SELECT FROM @extschema@.snowflake_sql_node_claims(cur.node_id) c
                WHERE c.role = @extschema@.snowflake_sql_claim_role(cur) AND c.database = current_database()) THEN
      BEGIN
        EXECUTE format('DROP ROLE %I', @extschema@.snowflake_sql_claim_role(cur));
      EXCEPTION WHEN insufficient_privilege OR dependent_objects_still_exist THEN
        NULL; -- the claim stays; another database then sees it as this database's
      END;
    END IF;
  END IF;
  PERFORM @extschema@.snowflake_sql_claim(new, true);
  RETURN new;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_configure(integer, text, text, integer, text, boolean) FROM PUBLIC;

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
