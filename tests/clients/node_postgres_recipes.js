// docs/clients.md, node-postgres 8: bigint ids arrive as strings, exact; parsed as
// Number (types.setTypeParser(20, Number)) they lose digits on the default layout and are
// exact on js53, and so are ids in JSON, which node-postgres (like PostgREST's clients)
// reads with JSON.parse; snowflake_encode gives text that survives JSON on any layout.
// The stock server is libpq's PGHOST, PGPORT, PGUSER, PGDATABASE (node-postgres reads
// them too); the js53 server is CLIENTS_JS53_HOST and CLIENTS_JS53_PORT.
'use strict';
const pg = require('pg');

const JS53 = { host: process.env.CLIENTS_JS53_HOST, port: Number(process.env.CLIENTS_JS53_PORT) };
const ITEMS = Array.from({ length: 200 }, (_, n) => `item ${n}`);
const INSERT = `INSERT INTO node_orders (item)
  SELECT item FROM unnest($1::text[]) WITH ORDINALITY AS given(item, n) ORDER BY n RETURNING item, id`;

function check(condition, message) {
  if (!condition) throw new Error(message);
}

// The ids (BigInts, or Numbers that hold them exactly) are distinct and strictly rising.
function rising(ids, what) {
  check(new Set(ids).size === ids.length, `${what}: ids repeat`);
  ids.forEach((id, i) => check(i === 0 || ids[i - 1] < id, `${what}: id ${id} follows ${ids[i - 1]}`));
}

// Each row's id, as the client got it, reads as its row's id in exact (item: id as text).
function sameIds(rows, exact) {
  rows.forEach((r) => check(String(r.id) === exact.get(r.item), `${r.item}: client ${r.id}, table ${exact.get(r.item)}`));
}

// A client whose bigints (type 20) are parsed by parse, or left as strings.
async function connect(server, parse) {
  const getTypeParser = (oid, format) => (oid === 20 ? parse : pg.types.getTypeParser(oid, format));
  const types = parse && { getTypeParser };
  const client = new pg.Client({ ...server, types });
  await client.connect();
  return client;
}

// A fresh table on server, the 200 items inserted in one statement: {rows as the client
// got them, exact: the ids as text, read back with a plain SELECT, by item}.
async function insertAll(server, parse) {
  const setup = await connect(server);
  await setup.query('DROP TABLE IF EXISTS node_orders');
  await setup.query(
    'CREATE TABLE node_orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text UNIQUE)');
  const client = await connect(server, parse);
  const { rows } = await client.query(INSERT, [ITEMS]);
  await client.end();
  const table = await setup.query('SELECT item, id::text FROM node_orders');
  const exact = new Map(table.rows.map((r) => [r.item, r.id]));
  await setup.end();
  check(rows.map((r) => r.item).join() === ITEMS.join(), 'RETURNING gave the rows in another order than given');
  return { rows, exact };
}

async function stringsByDefault() {
  const { rows, exact } = await insertAll({});
  check(rows.every((r) => typeof r.id === 'string'), 'an id arrived as something else than a string');
  sameIds(rows, exact);
  rising(rows.map((r) => BigInt(r.id)), 'one INSERT of 200 rows');
  return '200 ids as strings, each its row\'s, rising in row order';
}

async function numberLosesDigits() {
  const { rows, exact } = await insertAll({}, Number);
  const changed = rows.filter((r) => BigInt(r.id) !== BigInt(exact.get(r.item)));
  check(rows.every((r) => !Number.isSafeInteger(r.id)), 'an id of the default layout fits a safe integer');
  check(changed.length > 0, 'every id survived Number: update docs/clients.md');
  const collapsed = rows.length - new Set(rows.map((r) => r.id)).size;
  const [one] = changed;
  return `${changed.length} of 200 ids changed, e.g. ${exact.get(one.item)} became ${BigInt(one.id)}; ` +
    `${collapsed} became equal to another`;
}

async function numberExactOnJs53() {
  const { rows, exact } = await insertAll(JS53, Number);
  check(rows.every((r) => Number.isSafeInteger(r.id)), 'a js53 id is not a safe integer');
  sameIds(rows, exact);
  rising(rows.map((r) => r.id), 'one INSERT of 200 rows, js53');
  return '200 ids as Numbers, each its row\'s, rising in row order';
}

async function bigIntAnyLayout() {
  const { rows, exact } = await insertAll({}, BigInt);
  check(rows.every((r) => typeof r.id === 'bigint'), 'an id arrived as something else than a BigInt');
  sameIds(rows, exact);
  rising(rows.map((r) => r.id), 'one INSERT of 200 rows, BigInt');
  return '200 ids as BigInt, each its row\'s, rising in row order';
}

// Ids inside JSON, as a JSON API hands them out: node-postgres parses json with
// JSON.parse, so an id is a JavaScript number there whatever the bigint parser.
async function inJson(server) {
  const { exact } = await insertAll(server);
  const client = await connect(server);
  const { rows: [{ doc }] } = await client.query(`SELECT json_agg(json_build_object(
    'item', item, 'id', id, 'key', snowflake_encode(id))) AS doc FROM node_orders`);
  const { rows: decoded } = await client.query(
    'SELECT key, snowflake_decode(key)::text AS id FROM unnest($1::text[]) AS key', [doc.map((o) => o.key)]);
  await client.end();
  const byKey = new Map(decoded.map((r) => [r.key, r.id]));
  doc.forEach((o) => check(byKey.get(o.key) === exact.get(o.item), `${o.key} decodes to ${byKey.get(o.key)}`));
  return doc.filter((o) => BigInt(o.id) !== BigInt(exact.get(o.item))).length;
}

async function jsonDefault() {
  const changed = await inJson({});
  check(changed > 0, 'every id survived JSON: update docs/clients.md');
  return `${changed} of 200 JSON numbers changed; every snowflake_encode(id) decodes to its row's id`;
}

async function jsonJs53() {
  const changed = await inJson(JS53);
  check(changed === 0, `${changed} js53 ids changed in JSON`);
  return 'every JSON number exact; every snowflake_encode(id) decodes to its row\'s id';
}

const RECIPES = [
  ['node-postgres: bigint as string (the default)', stringsByDefault],
  ['node-postgres, the trap: setTypeParser(20, Number) on the default layout', numberLosesDigits],
  ['node-postgres: setTypeParser(20, Number) on js53', numberExactOnJs53],
  ['node-postgres: setTypeParser(20, BigInt)', bigIntAnyLayout],
  ['node-postgres, JSON on the default layout: ids as numbers, and snowflake_encode', jsonDefault],
  ['node-postgres, JSON on js53', jsonJs53],
];

(async () => {
  let failed = 0;
  for (const [name, recipe] of RECIPES) {
    try {
      console.log(`ok ${name}: ${await recipe()}`);
    } catch (error) {
      failed += 1;
      console.log(`FAIL ${name}: ${error.message}`);
    }
  }
  process.exit(failed ? 1 : 0);
})();
