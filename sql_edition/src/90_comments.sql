-- What \df+ and \dT+ say: the native's comments, where the SQL edition does the same;
-- and snowflake_sql_version(), the release installed, for a psql -f install that has no
-- pg_extension row to read it from (@version@ is filled in by sql_edition/build.sh).
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_version() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN '@version@';

COMMENT ON FUNCTION @extschema@.snowflake_next() IS
    'A new 64-bit id in the database''s layout (snowflake_layout(); by default 41 bits of ms since the epoch, 12 of sequence, 2 of node, 8 of slot). Use as a column default. SQL edition: the slot is one the session holds while it lives.';
COMMENT ON FUNCTION @extschema@.snowflake_next(bigint) IS
    'A new id whose gene field (its lowest bits) copies the low bits of a related key, so that id % 2^g = key % 2^g. Needs a layout with gene bits.';
COMMENT ON FUNCTION @extschema@.snowflake_floor(timestamptz) IS
    'The smallest id of the tick (ms by default) of a time: id >= snowflake_floor(a) AND id < snowflake_floor(b) selects the ids minted in [a, b).';
COMMENT ON FUNCTION @extschema@.snowflake_at(timestamptz, bigint) IS
    'A deterministic id: the tick of a time with a uid filling every bit below the time (0 to 4194303 by default). Keep such ids out of columns filled by snowflake_next().';
COMMENT ON FUNCTION @extschema@.snowflake_parse(bigint) IS
    'The parts of an id minted by snowflake_next(): time, node id, backend slot, worker id, sequence, gene.';
COMMENT ON FUNCTION @extschema@.snowflake_parse(bigint, text) IS
    'The parts of an id of another layout: a preset (default, worker-first, js53, twitter, discord, instagram, sonyflake) or a spec such as ''time:41, node:5, slot:5, sequence:12, epoch:2015-01-01''.';
COMMENT ON FUNCTION @extschema@.snowflake_compose(timestamptz, integer, integer, integer, integer, text) IS
    'The id of the given parts, in the database''s layout or the one given: the exact inverse of snowflake_parse.';
COMMENT ON FUNCTION @extschema@.snowflake_layout() IS
    'The database''s layout, as a spec that snowflake_parse(id, layout) reads.';
COMMENT ON TYPE @extschema@.snowflake_parts IS
    'The parts of a snowflake id, as returned by snowflake_parse().';
COMMENT ON FUNCTION @extschema@.snowflake_encode(bigint, text) IS
    'An id as fixed-width text that sorts as the id does under COLLATE "C": base32 (Crockford''s, 13 characters, the default) or base62 (11 characters).';
COMMENT ON FUNCTION @extschema@.snowflake_decode(text, text) IS
    'The id of a text from snowflake_encode, in base32 (the default; either case, I and L read as 1, O as 0) or base62.';
COMMENT ON FUNCTION @extschema@.snowflake_configure(integer, text, text, integer, text, boolean) IS
    'SQL edition: sets the node id, the layout and epoch (before any id is minted), the lead bound in ms, the node''s slots this database mints under (''all'', or a range such as ''64-127'' when databases of the server share the node id) and whether ids follow the clock inside a tick (follow_clock, on by default where the layout allows it), and claims the slots. The installing role''s alone, unless it grants EXECUTE.';
COMMENT ON TABLE @extschema@.snowflake_settings IS
    'SQL edition: the settings in force (the configured row, else the defaults), written by snowflake_configure only.';
