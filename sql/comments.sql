COMMENT ON FUNCTION snowflake_next() IS
    'A new 64-bit id: 41 bits of ms since snowflake.epoch, 10 bits of worker (node id and backend slot), 12 bits of sequence. Use as a column default.';
COMMENT ON FUNCTION snowflake_floor(timestamptz) IS
    'The smallest id of the millisecond of a time: id >= snowflake_floor(a) AND id < snowflake_floor(b) selects the ids minted in [a, b).';
COMMENT ON FUNCTION snowflake_at(timestamptz, bigint) IS
    'A deterministic id: the millisecond of a time with a uid (0 to 4194303) in the 22 low bits. Keep such ids out of columns filled by snowflake_next().';
COMMENT ON FUNCTION snowflake_parse(bigint) IS
    'The parts of an id minted by snowflake_next(): time, node id, backend slot, worker id, sequence.';
COMMENT ON TYPE snowflake_parts IS
    'The parts of a snowflake id, as returned by snowflake_parse().';
