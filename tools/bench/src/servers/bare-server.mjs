// The baseline: a bare node:http server answering from memory with the same bytes the gateway sent.
// argv[2]: a JSON file of { "<path with query>": "<body>" }; argv[3]: the port. Prints "listening" when ready.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

const bodies = new Map(Object.entries(JSON.parse(readFileSync(process.argv[2], "utf8"))));
const notFound = JSON.stringify({ success: false, error: { code: "NOT_FOUND", message: "not found" } });

const server = createServer((req, res) => {
  const body = bodies.get(req.url);
  res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json; charset=utf-8" });
  res.end(body ?? notFound);
});
server.keepAliveTimeout = 5_000;
server.listen(Number(process.argv[3] ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
