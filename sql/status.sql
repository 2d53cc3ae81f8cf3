-- The status view: snowflake_server_status() (src/status.rs), and whether this server's
-- node id is claimed in this database.
CREATE VIEW snowflake_status AS
SELECT s.*,
       EXISTS (SELECT FROM snowflake_nodes n
               WHERE n.node_id = s.node_id AND n.system_identifier = s.system_identifier)
           AS node_claimed
FROM snowflake_server_status() s;
GRANT SELECT ON snowflake_status TO PUBLIC;
