// Health probe for containers: `node healthcheck.mjs <url> [timeoutMs]` exits 0 when GET <url> answers 200 in
// time and 1 otherwise, printing one line on failure. `http://` speaks HTTP/1.1 (the gateway); `h2c://` speaks
// HTTP/2 without TLS (the registry and the conversation service serve their probes only that way, which
// Kubernetes httpGet probes and curl without --http2-prior-knowledge cannot). Plain Node, no dependencies, so
// it starts fast and runs in any of the images.
import http from "node:http";
import http2 from "node:http2";

const [target, timeoutArg = "3000"] = process.argv.slice(2);
const timeoutMs = Number(timeoutArg);

function fail(reason) {
  process.stderr.write(`unhealthy: ${target}: ${reason}\n`);
  process.exit(1);
}

/** The most telling word for a failure: a cancelled HTTP/2 stream carries the connection's error as its cause. */
function reason(error) {
  const root = error.cause ?? error;
  return root.code ?? root.message;
}

function settle(status) {
  if (status === 200) process.exit(0);
  fail(`status ${status}`);
}

if (!target || !/^(http|h2c):\/\//.test(target) || !(timeoutMs > 0)) {
  process.stderr.write(
    "usage: node healthcheck.mjs http://host:port/path|h2c://host:port/path [timeoutMs]\n",
  );
  process.exit(2);
}
// Kept referenced: a connection that closes without an answer must end in a failure, never in a silent exit 0.
setTimeout(() => fail(`no answer within ${timeoutMs} ms`), timeoutMs);

const url = new URL(target.replace(/^h2c:/, "http:"));
if (target.startsWith("h2c:")) {
  const session = http2.connect(url.origin);
  session.on("error", (error) => fail(reason(error)));
  const request = session.request({ ":path": `${url.pathname}${url.search}` });
  request.on("error", (error) => fail(reason(error)));
  request.on("response", (headers) => settle(headers[":status"]));
  request.end();
} else {
  http
    .get(url, { agent: false }, (response) => settle(response.statusCode))
    .on("error", (error) => fail(reason(error)));
}
