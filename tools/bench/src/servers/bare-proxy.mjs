// The floor of any service in front of a provider: a bare node:http server that forwards each request to the
// provider over a keep-alive connection and streams the answer back, doing nothing else.
// argv[2]: the provider's origin (http://host:port); argv[3]: the port. Prints "listening <port>" when ready.
import { Agent, createServer, request } from "node:http";

const upstream = new URL(process.argv[2]);
const agent = new Agent({ keepAlive: true });

const server = createServer((req, res) => {
  const forwarded = request(
    {
      host: upstream.hostname,
      port: upstream.port,
      path: req.url,
      method: req.method,
      agent,
      headers: {
        "content-type": req.headers["content-type"] ?? "application/json",
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        ...(req.headers["content-length"] ? { "content-length": req.headers["content-length"] } : {}),
      },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forwarded.on("error", () => {
    res.writeHead(502).end();
  });
  req.pipe(forwarded);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[3] ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
