import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import {
  AgentryError,
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  PermissionDeniedError,
  UserExport,
  type UserExportLine,
} from "../src/index.js";
import { AGENT_ID } from "./helpers.js";
import { fail, localServer, type ServerHandler } from "./server.js";

function message(n: number, text = `text ${n}`) {
  return {
    id: `msg_${String(n).padStart(3, "0")}`,
    agentId: AGENT_ID,
    conversationId: "conv_01JAAAAAAAAAAAAAAAAAAAAAAA",
    userId: "user-42",
    roomId: null,
    role: "user",
    text,
    createdAt: "2026-01-01T00:00:00.000Z",
  };
}

const line = (value: unknown) => `${JSON.stringify(value)}\n`;

/** Starts an NDJSON response as the gateway does: chunked, no length. */
function startNdjson(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, {
    "content-type": "application/x-ndjson; charset=utf-8",
    "x-request-id": "req_export",
    ...headers,
  });
}

/** Writes and waits until the chunk has left, so the client sees chunks as they are written. */
function write(res: ServerResponse, chunk: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => res.write(chunk, (error) => (error ? reject(error) : resolve())));
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function collect(stream: AsyncIterable<UserExportLine>) {
  const items: UserExportLine[] = [];
  const error = await (async () => {
    for await (const item of stream) items.push(item);
  })().catch((e: unknown) => e);
  return { items, error };
}

describe("users.export", () => {
  it("yields each message as its line arrives, before the export has ended", async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let ended = false;
    const server = await localServer(async (_request, res) => {
      startNdjson(res);
      await write(res, line(message(1)));
      await released;
      await write(res, line(message(2)));
      ended = true;
      res.end();
    });
    const texts: string[] = [];
    for await (const item of server.client().users.export("user-42")) {
      texts.push(item.text);
      // The server holds the rest back until the first message has been seen here.
      if (texts.length === 1) {
        expect(ended).toBe(false);
        release();
      }
    }
    expect(texts).toEqual(["text 1", "text 2"]);
    const [seen] = server.requests;
    expect(seen!.method).toBe("GET");
    expect(seen!.url.pathname).toBe("/v1/users/user-42/export");
    expect(seen!.headers.accept).toBe("application/x-ndjson");
  });

  it("reads lines split across chunks, and characters split across bytes", async () => {
    const first = line(message(1, "naïve café ✓"));
    const second = line(message(2));
    const bytes = new TextEncoder().encode(first + second);
    const cut = new TextEncoder().encode(first).length - 4; // inside "✓", three bytes, then "\"…"
    const server = await localServer(async (_request, res) => {
      startNdjson(res);
      for (const piece of [bytes.slice(0, 10), bytes.slice(10, cut), bytes.slice(cut, cut + 2)]) {
        await write(res, piece);
        await wait(5);
      }
      await write(res, bytes.slice(cut + 2));
      res.end();
    });
    const { items, error } = await collect(server.client().users.export("user-42"));
    expect(error).toBeUndefined();
    expect(items).toEqual([message(1, "naïve café ✓"), message(2)]);
  });

  it("reads the memories after the messages whole, each told apart from a message by its source", async () => {
    const memory = (n: number, source: string | null) => ({
      id: `mem_${String(n).padStart(3, "0")}`,
      agentId: AGENT_ID,
      userId: "user-42",
      text: `fact ${n}`,
      source: source === null ? null : { messageId: source },
      createdAt: "2026-01-02T00:00:00.000Z",
    });
    const server = await localServer(async (_request, res) => {
      startNdjson(res);
      await write(res, line(message(1)) + line(message(2)));
      await write(res, line(memory(1, "msg_001")) + line(memory(2, null)));
      res.end();
    });
    const { items, error } = await collect(server.client().users.export("user-42"));
    expect(error).toBeUndefined();
    expect(items).toEqual([message(1), message(2), memory(1, "msg_001"), memory(2, null)]);
    const kinds = items.map((item) => ("source" in item ? `memory ${item.id}` : `${item.role} ${item.id}`));
    expect(kinds).toEqual(["user msg_001", "user msg_002", "memory mem_001", "memory mem_002"]);
  });

  it("an export of a user without messages is empty", async () => {
    const server = await localServer((_request, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson; charset=utf-8", "content-length": "0" });
      res.end();
    });
    expect(await collect(server.client().users.export("nobody"))).toEqual({ items: [], error: undefined });
  });

  it("a connection that breaks mid-export throws APIConnectionError after what arrived, and is not retried", async () => {
    const server = await localServer(async (_request, res) => {
      startNdjson(res);
      await write(res, line(message(1)) + line(message(2)));
      await wait(20);
      // As the gateway does when a later page fails: no final chunk, the socket closed.
      res.destroy();
    });
    const { items, error } = await collect(server.client().users.export("user-42"));
    expect(items.map((item) => item.text)).toEqual(["text 1", "text 2"]);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APITimeoutError);
    expect((error as Error).message).toMatch(/^The export broke/);
    expect(server.requests).toHaveLength(1);
  });

  it("a body that ends in the middle of a line is an error, not a shorter export", async () => {
    const server = await localServer(async (_request, res) => {
      startNdjson(res);
      await write(res, line(message(1)) + line(message(2)).slice(0, 40));
      res.end();
    });
    const { items, error } = await collect(server.client().users.export("user-42"));
    expect(items.map((item) => item.text)).toEqual(["text 1"]);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect((error as Error).message).toMatch(/cut short: the body ended in the middle of a line/);
  });

  it("failures before the export starts are the usual errors, retried like any read", async () => {
    const answer: ServerHandler = (_request, res) => {
      startNdjson(res, {
        "x-ratelimit-limit": "60",
        "x-ratelimit-remaining": "12",
        "x-ratelimit-reset": "1767225660",
      });
      res.end(line(message(1)));
    };
    const server = await localServer(fail(503, "AGENT_UNAVAILABLE"), answer, fail(403, "FORBIDDEN"));
    const client = server.client();
    const exported = client.users.export("user-42");
    expect((await collect(exported)).items).toHaveLength(1);
    expect(exported.requestId).toBe("req_export");
    expect(server.requests).toHaveLength(2);
    expect(client.lastRateLimit).toEqual({ limit: 60, remaining: 12, resetAt: new Date(1767225660 * 1000) });

    const { error } = await collect(client.users.export("user-42"));
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, code: "FORBIDDEN" });
  });

  it("sends nothing until the loop starts, and can be iterated once", async () => {
    const server = await localServer((_request, res) => {
      startNdjson(res);
      res.end();
    });
    const exported = server.client().users.export("user-42");
    expect(exported).toBeInstanceOf(UserExport);
    await wait(20);
    expect(server.requests).toHaveLength(0);
    await collect(exported);
    expect(server.requests).toHaveLength(1);
    expect(() => exported[Symbol.asyncIterator]()).toThrow(AgentryError);
  });

  it("leaving the loop early closes the connection", async () => {
    let closed = false;
    const server = await localServer(async (request, res) => {
      request.res.on("close", () => {
        closed = true;
      });
      startNdjson(res);
      for (let n = 1; !closed && n < 10_000; n++) {
        await write(res, line(message(n))).catch(() => {});
        await wait(2);
      }
      res.end();
    });
    for await (const item of server.client().users.export("user-42")) {
      expect(item.text).toBe("text 1");
      break;
    }
    for (let tries = 0; !closed && tries < 100; tries++) await wait(10);
    expect(closed).toBe(true);
  });

  it("an export gone silent for longer than the timeout throws APITimeoutError", async () => {
    const server = await localServer(async (_request, res) => {
      startNdjson(res);
      await write(res, line(message(1)));
    });
    const { items, error } = await collect(server.client({ timeout: 150 }).users.export("user-42"));
    expect(items).toHaveLength(1);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect((error as Error).message).toMatch(/sent nothing for 150 ms/);
  });

  it("an abort ends the loop with APIUserAbortError, never as if the export were complete", async () => {
    const server = await localServer(async (_request, res) => {
      startNdjson(res);
      await write(res, line(message(1)));
    });
    const controller = new AbortController();
    const exported = server.client().users.export("user-42", { signal: controller.signal });
    const items: UserExportLine[] = [];
    const error = await (async () => {
      for await (const item of exported) {
        items.push(item);
        controller.abort();
      }
    })().catch((e: unknown) => e);
    expect(items).toHaveLength(1);
    expect(error).toBeInstanceOf(APIUserAbortError);
  });

  it("refuses a line that is not JSON, and a response that is not NDJSON", async () => {
    const server = await localServer(
      async (_request, res) => {
        startNdjson(res);
        res.end(`${line(message(1))}<html>\n`);
      },
      (_request, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("[]");
      },
    );
    const client = server.client();
    const broken = await collect(client.users.export("user-42"));
    expect(broken.items).toHaveLength(1);
    expect(broken.error).toBeInstanceOf(APIError);
    expect((broken.error as APIError).message).toBe("A line of the export is not JSON.");
    const wrongType = await collect(client.users.export("user-42"));
    expect((wrongType.error as Error).message).toMatch(
      /expected application\/x-ndjson, got 'application\/json'/,
    );
  });
});
