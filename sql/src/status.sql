-- The status view: snowflake_server_status() (src/status.rs), whether this server's node
-- id is claimed in this database, and whether another server claims it there (the row of
-- another system identifier holds it: this server's mints are refused).
CREATE VIEW snowflake_status AS
SELECT s.*,
       EXISTS (SELECT FROM snowflake_nodes n
               WHERE n.node_id = s.node_id AND n.system_identifier = s.system_identifier)
           AS node_claimed,
       EXISTS (SELECT FROM snowflake_nodes n
               WHERE n.node_id = s.node_id AND n.system_identifier <> s.system_identifier)
           AS node_claimed_by_other
FROM snowflake_server_status() s;
GRANT SELECT ON snowflake_status TO PUBLIC;
