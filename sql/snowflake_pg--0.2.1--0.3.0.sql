-- snowflake_pg 0.2.1 to 0.3.0. Run by ALTER EXTENSION snowflake_pg UPDATE, once the 0.3.0
-- library is installed.
\echo Use "ALTER EXTENSION snowflake_pg UPDATE TO '0.3.0'" to load this file. \quit
