-- Node claims: which server mints with which node id (src/claims.rs reads them).
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
