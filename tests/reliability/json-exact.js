// Reads a JSON array of {"id": <number>, "text": "<the id's decimal text>"} on stdin, as a
// JavaScript client of a JSON API gets ids, and prints how many ids it holds exactly.
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const rows = JSON.parse(input);
  const exact = rows.filter((row) => Number.isSafeInteger(row.id) && String(row.id) === row.text);
  console.log(`exact ${exact.length} of ${rows.length}`);
});
