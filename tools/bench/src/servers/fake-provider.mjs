// A zero-latency OpenAI-compatible Chat Completions server: it answers at once, streamed or not, so what is
// measured through it is the service's own cost. The model "hold" streams one text chunk and then holds the
// stream open until the client leaves: the idle-stream benchmark. GET /last-request returns the last body it
// received, so the direct baseline sends the provider exactly what the service sent.
// argv[2]: the port (0 for any). Prints "listening <port>" when ready.
import { createServer } from "node:http";

let lastRequest = "{}";
const usage = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 };
const base = { id: "chatcmpl-bench", created: 1767225600, system_fingerprint: "fp_bench" };

function chunk(model, delta, finish = null) {
  const payload = {
    ...base,
    object: "chat.completion.chunk",
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(payload)}\n\n`;
}

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/last-request") {
    res.writeHead(200, { "content-type": "application/json" }).end(lastRequest);
    return;
  }
  const parts = [];
  req.on("data", (part) => parts.push(part));
  req.on("end", () => {
    lastRequest = Buffer.concat(parts).toString("utf8");
    const body = JSON.parse(lastRequest);
    const model = body.model ?? "bench-model";
    if (!body.stream) {
      const payload = JSON.stringify({
        ...base,
        object: "chat.completion",
        model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: "Hello from the bench.", refusal: null },
            logprobs: null,
            finish_reason: "stop",
          },
        ],
        usage,
      });
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(payload),
      });
      res.end(payload);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    if (model === "hold") {
      res.write(chunk(model, { role: "assistant", content: "" }) + chunk(model, { content: "Held " }));
      return;
    }
    res.end(
      chunk(model, { role: "assistant", content: "" }) +
        chunk(model, { content: "Hello " }) +
        chunk(model, { content: "from the " }) +
        chunk(model, { content: "bench." }) +
        chunk(model, {}, "stop") +
        `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", model, choices: [], usage })}\n\n` +
        "data: [DONE]\n\n",
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
