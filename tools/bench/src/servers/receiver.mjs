// A webhook receiver that does nothing but count: each POST is read whole and answered 204. GET /stats answers
// {count, firstAt, lastAt} (epoch milliseconds, fractional, comparable across processes); POST /reset starts over.
// argv[2]: the port (0 for any). Prints "listening <port>" when ready.
import { createServer } from "node:http";

const now = () => performance.timeOrigin + performance.now();
let stats = { count: 0, firstAt: null, lastAt: null };

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/stats") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats));
    return;
  }
  if (req.url === "/reset") {
    stats = { count: 0, firstAt: null, lastAt: null };
    res.writeHead(204).end();
    return;
  }
  req.resume();
  req.on("end", () => {
    const at = now();
    stats.count += 1;
    stats.firstAt ??= at;
    stats.lastAt = at;
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
