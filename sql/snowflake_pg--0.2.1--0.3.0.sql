-- snowflake_pg 0.2.1 to 0.3.0. Run by ALTER EXTENSION snowflake_pg UPDATE, once the 0.3.0
-- library is installed.
\echo Use "ALTER EXTENSION snowflake_pg UPDATE TO '0.3.0'" to load this file. \quit

-- snowflake_status gives what an operator alerts on as numbers: when the layout's time
-- field runs out (epoch_ends) and the share of it used (epoch_used), when the high-water
-- mark was last renewed and how many of its renewals failed, and whether another server
-- claims this server's node id (node_claimed_by_other). The function's result type
-- changes, so it and the view over it are dropped and made again, as sql/src/status.sql and
-- src/status.rs make them; a view of the DBA's over snowflake_status blocks the update
-- (drop it first, and make it again after). The view's grant is given again.
DROP VIEW snowflake_status;
DROP FUNCTION snowflake_server_status();

CREATE FUNCTION "snowflake_server_status"() RETURNS TABLE (
	"node_id" INT,  /* Option < i32 > */
	"node_source" TEXT,  /* & '_ str */
	"system_identifier" bigint,  /* i64 */
	"layout" TEXT,  /* String */
	"epoch" timestamp with time zone,  /* TimestampWithTimeZone */
	"preloaded" bool,  /* bool */
	"slots" INT,  /* i32 */
	"backends_minting" INT,  /* Option < i32 > */
	"most_backends_minting" INT,  /* Option < i32 > */
	"high_water_mark" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"furthest_lead_ms" bigint,  /* i64 */
	"clock_steps_absorbed" bigint,  /* i64 */
	"clock_steps_refused" bigint,  /* i64 */
	"spent_tick_waits" bigint,  /* i64 */
	"epoch_ends" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"epoch_used" double precision,  /* f64 */
	"high_water_mark_renewed" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"high_water_mark_renewals_failed" bigint  /* Option < i64 > */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'snowflake_server_status_wrapper';

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
