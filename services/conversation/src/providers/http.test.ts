import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AppError } from "@agentry/errors";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeAnthropic, startFakeOpenAI } from "../testing/index.js";
import { createAnthropicProvider } from "./anthropic.js";
import { createOpenAIProvider } from "./openai.js";
import type { ModelProvider, ProviderEvent, ProviderRequest } from "./types.js";

const request: ProviderRequest = {
  model: "m",
  system: "Be brief.",
  messages: [{ role: "user", text: "Hi" }],
  maxTokens: 50,
};
const live = () => new AbortController().signal;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A server that answers every request with `respond`; its base URL. */
async function serve(respond: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => respond(req, res));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function sse(res: ServerResponse, frames: string[]): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const frame of frames) res.write(frame);
  res.end();
}

const openai = (baseURL: string, timeoutMs = 5_000) =>
  createOpenAIProvider({ apiKey: "sk-test-key-0000", baseURL, defaultModel: "m", timeoutMs });
const anthropic = (baseURL: string, timeoutMs = 5_000) =>
  createAnthropicProvider({ apiKey: "sk-ant-test-0000", baseURL, defaultModel: "m", timeoutMs });

async function collect(provider: ModelProvider, signal = live()) {
  const events: ProviderEvent[] = [];
  try {
    for await (const event of await provider.stream(request, signal)) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error: error as AppError };
  }
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error("expected a rejection");
}

describe("requests", () => {
  it("openai: POSTs {baseURL}/chat/completions, with or without a trailing slash, with the key as bearer", async () => {
    const fake = await startFakeOpenAI({ apiKey: "sk-test-key-0000" });
    closers.push(() => fake.close());
    for (const baseURL of [fake.baseURL, `${fake.baseURL}/`]) {
      const result = await openai(baseURL).complete(request, live());
      expect(result).toMatchObject({ text: "Echo: Hi", model: "m", finishReason: "stop" });
      const sent = fake.lastRequest;
      expect(sent.path).toBe("/v1/chat/completions");
      expect(sent.headers).toMatchObject({
        authorization: "Bearer sk-test-key-0000",
        "content-type": "application/json",
      });
      expect(sent.body).toEqual({
        model: "m",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hi" },
        ],
        max_completion_tokens: 50,
        stream: false,
      });
    }
  });

  it("anthropic: POSTs {baseURL}/v1/messages with x-api-key and anthropic-version", async () => {
    const fake = await startFakeAnthropic({ apiKey: "sk-ant-test-0000" });
    closers.push(() => fake.close());
    for (const baseURL of [fake.baseURL, `${fake.baseURL}/`]) {
      const { events } = await collect(anthropic(baseURL));
      expect(events.at(-1)).toMatchObject({ type: "done", finishReason: "stop" });
      const sent = fake.lastRequest;
      expect(sent.path).toBe("/v1/messages");
      expect(sent.headers).toMatchObject({
        "x-api-key": "sk-ant-test-0000",
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
      });
      expect(sent.body).toEqual({
        model: "m",
        max_tokens: 50,
        system: "Be brief.",
        messages: [{ role: "user", content: "Hi" }],
        stream: true,
      });
    }
  });
});

describe("streams", () => {
  it("keeps a character split between two chunks whole", async () => {
    const data = Buffer.from(
      `data: ${JSON.stringify({ model: "m", choices: [{ delta: { content: "café" } }] })}\n\n`,
    );
    const split = data.indexOf(Buffer.from("é")) + 1;
    const baseURL = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(data.subarray(0, split));
      setTimeout(() => {
        res.write(data.subarray(split));
        res.end(
          `data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`,
        );
      }, 20);
    });
    const { events, error } = await collect(openai(baseURL));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: "delta", text: "café" },
      { type: "done", model: "m", finishReason: "stop", usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
  });

  it.each([
    ["server_error", "AGENT_UNAVAILABLE", /failed while answering/],
    ["invalid_request_error", "MODEL_ERROR", /rejected the request \(invalid_request_error\)/],
  ])("openai: an error sent inside a started stream (%s) is %s", async (type, code, message) => {
    const baseURL = await serve((_req, res) =>
      sse(res, [
        `data: ${JSON.stringify({ choices: [{ delta: { content: "Hel" } }] })}\n\n`,
        `data: ${JSON.stringify({ error: { type, message: "sk-test-key-0000 broke" } })}\n\n`,
      ]),
    );
    const { events, error } = await collect(openai(baseURL));
    expect(events).toEqual([{ type: "delta", text: "Hel" }]);
    expect(error?.code).toBe(code);
    expect(error?.message).toMatch(message);
    expect(error?.message).not.toContain("sk-test-key-0000");
  });

  it("anthropic: an error event inside a started stream ends it with the error's type", async () => {
    const baseURL = await serve((_req, res) =>
      sse(res, [
        `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", delta: { type: "text_delta", text: "Hel" } })}\n\n`,
        `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`,
      ]),
    );
    const { events, error } = await collect(anthropic(baseURL));
    expect(events).toEqual([{ type: "delta", text: "Hel" }]);
    expect(error?.code).toBe("AGENT_UNAVAILABLE");
    expect(error?.message).toMatch(/failed while answering/);
  });

  it("a stream whose body ends without a finish is incomplete", async () => {
    const baseURL = await serve((_req, res) =>
      sse(res, [`data: ${JSON.stringify({ choices: [{ delta: { content: "Hel" } }] })}\n\n`]),
    );
    const { events, error } = await collect(openai(baseURL));
    expect(events).toEqual([{ type: "delta", text: "Hel" }]);
    expect(error?.message).toMatch(/ended before the reply was complete/);
  });

  it.each(["openai", "anthropic"] as const)(
    "%s: leaving the iteration early, or aborting before it, abandons the upstream request",
    async (name) => {
      const fake = name === "openai" ? await startFakeOpenAI() : await startFakeAnthropic();
      closers.push(() => fake.close());
      const provider = name === "openai" ? openai(fake.baseURL) : anthropic(fake.baseURL);

      fake.reply("one two three four", { chunkDelayMs: 50 });
      for await (const event of await provider.stream(request, live())) {
        expect(event.type).toBe("delta");
        break;
      }
      expect(await fake.lastRequest.outcome).toBe("aborted");

      fake.reply("one two three four", { chunkDelayMs: 50 });
      const controller = new AbortController();
      await provider.stream(request, controller.signal);
      controller.abort();
      expect(await fake.lastRequest.outcome).toBe("aborted");
    },
  );
});

describe("failures", () => {
  it("a refusal whose body is not JSON keeps its status", async () => {
    const baseURL = await serve((_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html>Bad gateway</html>");
    });
    const error = await rejection(openai(baseURL).complete(request, live()));
    expect(error.code).toBe("AGENT_UNAVAILABLE");
    expect(error.message).toMatch(/failed \(HTTP 502\)/);
  });

  it("no response headers by the backstop, a second after timeoutMs, is a connection failure", async () => {
    const baseURL = await serve(() => {});
    const error = await rejection(anthropic(baseURL, 100).stream(request, live()));
    expect(error.code).toBe("AGENT_UNAVAILABLE");
    expect(error.message).toMatch(/could not be reached/);
  });

  it("a JSON answer that is not a completion is incomplete", async () => {
    const baseURL = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"unexpected": true}');
    });
    const error = await rejection(openai(baseURL).complete(request, live()));
    expect(error.message).toMatch(/ended before the reply was complete/);
  });
});
