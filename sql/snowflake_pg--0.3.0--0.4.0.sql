-- snowflake_pg 0.3.0 to 0.4.0. Run by ALTER EXTENSION snowflake_pg UPDATE, once the 0.4.0
-- library is installed.
\echo Use "ALTER EXTENSION snowflake_pg UPDATE TO '0.4.0'" to load this file. \quit

-- No object changes: 0.4.0 changes the library alone (the default layout's field order,
-- the sequence following the clock, the setting snowflake.reordered_at). What a server
-- upgraded from 0.3.0 must do before its first id is in CHANGELOG.md's 0.4.0 entry.
