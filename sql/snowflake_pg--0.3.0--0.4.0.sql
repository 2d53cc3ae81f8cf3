-- snowflake_pg 0.3.0 to 0.4.0. Run by ALTER EXTENSION snowflake_pg UPDATE, once the 0.4.0
-- library is installed.
\echo Use "ALTER EXTENSION snowflake_pg UPDATE TO '0.4.0'" to load this file. \quit

-- 0.4.0 changes the library (the default layout's field order, the sequence following the
-- clock, the setting snowflake.reordered_at); of the objects, two comments say so, as
-- sql/src/comments.sql has them. What a server upgraded from 0.3.0 must do before its first
-- id is in CHANGELOG.md's 0.4.0 entry.
COMMENT ON FUNCTION snowflake_next() IS
    'A new 64-bit id in the server''s layout (snowflake_layout(); by default 41 bits of ms since snowflake.epoch, 12 of sequence following the clock inside the ms, 2 of node, 8 of backend slot). Use as a column default.';
COMMENT ON FUNCTION snowflake_parse(bigint, text) IS
    'The parts of an id of another layout: a preset (default, worker-first, js53, twitter, discord, instagram, sonyflake) or a spec such as ''time:41, node:5, slot:5, sequence:12, epoch:2015-01-01''.';
