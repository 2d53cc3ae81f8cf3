-- Every function of the extension, called by eve in a new session whose search_path puts
-- her temporary schema, her own schema and public before pg_catalog, with temporary tables
-- named as the catalogs and the claims table. Errors are expected only where eve lacks the
-- right (security.sh checks which).
SET search_path = pg_temp, eve, public, pg_catalog;
CREATE TEMP TABLE pg_extension (oid oid, extname name, extowner oid, extnamespace oid);
CREATE TEMP TABLE pg_namespace (oid oid, nspname name);
CREATE TEMP TABLE pg_depend (classid oid, objid oid, refclassid oid, refobjid oid, deptype "char");
CREATE TEMP TABLE pg_proc (oid oid, proname name, pronamespace oid, proargtypes oidvector);
CREATE TEMP TABLE pg_dist_local_group (groupid int);
CREATE TEMP TABLE snowflake_nodes (node_id int, system_identifier bigint, server text,
                                   layout text, epoch timestamptz, claimed_at timestamptz);
INSERT INTO pg_extension VALUES (1, 'snowflake_pg', 10, 1);

SELECT snowflake_next() > 0 AS minted;
SELECT snowflake_next(7) > 0 AS minted_with_gene;
SELECT snowflake_floor(now()) > 0 AS floor;
SELECT snowflake_at(now(), 1) > 0 AS at;
SELECT (snowflake_parse(snowflake_next())).node_id AS parsed_node_id;
SELECT (snowflake_parse(175928847299117063, 'discord')).worker_id AS parsed_as_discord;
SELECT snowflake_compose(now(), 0, 1, 2) > 0 AS composed;
SELECT snowflake_layout() <> '' AS layout;
SELECT snowflake_decode(snowflake_encode(12345)) = 12345 AS text_form;
SELECT lower < upper AS bounds FROM snowflake_bounds(now(), now() + interval '1 day');
SELECT count(*) AS key_holders FROM snowflake_key_holders('eve.orders', 'id');
SELECT change FROM snowflake_convert('eve.orders', 'id');
SELECT snowflake_release_node(0);
SELECT * FROM snowflake_claim_node(3, 42, 'eve', '2020-01-01', true);
SELECT node_id, preloaded FROM snowflake_server_status();
SELECT node_id, node_claimed FROM snowflake_status;
SHOW snowflake.node_id;
