-- Layouts: parsing ids of other layouts and systems, composing them back, and the
-- errors of a bad layout. The server here has the default layout.
\set VERBOSITY default
SET timezone = 'UTC';
SET datestyle = 'ISO';

SELECT snowflake_layout();

-- The presets, read as specs: the way snowflake_layout() prints them.
SELECT name, to_char((snowflake_parse(0, name)).ts, 'YYYY-MM-DD HH24:MI:SS.MS') AS epoch
  FROM unnest(ARRAY['default', 'worker-first', 'js53', 'twitter', 'discord', 'instagram', 'sonyflake']) name;

-- Ids of other systems, taken apart.
SELECT * FROM snowflake_parse(175928847299117063, 'discord');
SELECT * FROM snowflake_parse(6593741087309889548,
  'time:41, node:6, sequence:12, gene:4, epoch:1970-01-01T00:00:00Z');
SELECT * FROM snowflake_parse(snowflake_compose('2026-11-01 12:00:00.017', 1, 200, 63, 0, 'js53'), 'js53');
-- Spaces are optional; a time unit of 10 ms keeps the time to the tick.
SELECT * FROM snowflake_parse(1234567890123, 'time:39/10ms,sequence:8,node:16,epoch:2014-09-01');

-- The default order puts the sequence above node and slot; worker-first, 0.3.0's, below.
SELECT name, p.node_id, p.backend_slot, p.sequence
  FROM unnest(ARRAY['default', 'worker-first']) name,
       LATERAL snowflake_parse(snowflake_compose('2026-11-01 12:00:00.017', 3, 200, 4000, 0, name), name) p;
SELECT snowflake_compose('2026-11-01', 3, 200, 4000) - snowflake_floor('2026-11-01') AS default_low_bits,
       snowflake_compose('2026-11-01', 3, 200, 4000, 0, 'worker-first') - snowflake_floor('2026-11-01') AS worker_first_low_bits,
       (4000 << 10) | (3 << 8) | 200 AS sequence_node_slot;
-- A setting a session cannot change: the configuration file's, at a reload.
SHOW snowflake.reordered_at;
SET snowflake.reordered_at = '2026-01-01';

-- compose is the inverse of parse, under the server's layout and any other.
SELECT snowflake_compose(p.ts, p.node_id, p.backend_slot, p.sequence) = 912413252820934656 AS server_round_trip
  FROM snowflake_parse(912413252820934656) p;
SELECT snowflake_compose(p.ts, p.node_id, p.backend_slot, p.sequence, p.gene, 'discord') AS discord
  FROM snowflake_parse(175928847299117063, 'discord') p;
SELECT snowflake_compose(NULL, 0, 0, 0) IS NULL AS null_in_null_out;

-- js53 ids stay at or below 2^53 - 1, the largest integer a JavaScript number holds exactly.
SELECT snowflake_compose('2063-07-21 06:52:14.719+00', 3, 255, 63, 0, 'js53') = 2^53 - 1 AS last_js53_id;

-- Bad layouts and parts: what is wrong, and how to write it.
SELECT snowflake_parse(1, 'time:41, node:2, slot:8, sequence:11');
SELECT snowflake_parse(1, 'time:41, worker:10, sequence:12');
SELECT snowflake_parse(1, 'node:10, time:41, sequence:12');
SELECT snowflake_parse(1, 'time:41, gene:4, node:6, sequence:12');
SELECT snowflake_parse(1, 'time:41, node:2, node:8, sequence:12');
SELECT snowflake_parse(1, 'time:41/5ms, node:10, sequence:12');
SELECT snowflake_parse(1, 'time:41, node:10, sequence:12, epoch:yesterday');
SELECT snowflake_parse(1, 'mastodon');
SELECT snowflake_parse(9007199254740992, 'js53');
SELECT snowflake_compose(now(), 4, 0, 0);
SELECT snowflake_compose(now(), 0, 0, 0, 1);
SELECT snowflake_compose('2070-01-01', 0, 0, 0, 0, 'js53');
SELECT snowflake_next(42);
SELECT snowflake_next(NULL);
