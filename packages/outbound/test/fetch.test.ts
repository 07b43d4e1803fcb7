import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { env, parseEnv, z } from "@agentry/config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGuardedFetch, OutboundRefusedError, resolveDestination } from "../src/index.js";

const strict = { allowPrivateNetworks: false };

/** The policy as a deployable reads it from its environment. */
function policyOf(environment: NodeJS.ProcessEnv) {
  const config = parseEnv(z.object({ ALLOW_PRIVATE_NETWORKS: env.allowPrivateNetworks() }), environment);
  return { allowPrivateNetworks: config.ALLOW_PRIVATE_NETWORKS };
}

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/redirect") {
      res.writeHead(302, { location: `http://127.0.0.1:${port}/private` });
      res.end();
    } else if (req.url === "/large") {
      res.writeHead(200, { "content-length": String(64 * 1024) });
      res.end(Buffer.alloc(64 * 1024, 97));
    } else if (req.url === "/stream") {
      // No Content-Length: the limit is found while reading.
      res.writeHead(200, { "content-type": "text/plain" });
      for (let i = 0; i < 64; i++) res.write(Buffer.alloc(1024, 98));
      res.end();
    } else if (req.url === "/slow") {
      res.writeHead(200);
      res.write("partial");
      setTimeout(() => res.end(), 2_000);
    } else if (req.method === "POST") {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => res.end(JSON.stringify({ got: body, type: req.headers["content-type"] })));
    } else {
      res.end("reached");
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.close();
});

describe("createGuardedFetch", () => {
  it("refuses private addresses, http and names resolving to loopback by default", async () => {
    const guarded = createGuardedFetch(policyOf({}));
    try {
      for (const [url, reason] of [
        [`https://127.0.0.1:${port}/`, /private, loopback or reserved address \(127\.0\.0\.1\)/],
        ["https://169.254.169.254/latest/meta-data", /169\.254\.169\.254/],
        ["https://[::1]/", /::1/],
        [`http://example.com:${port}/`, /must be an https URL/],
        [`https://localhost:${port}/`, /localhost resolves to a private/],
      ] as const) {
        const error = await guarded.fetch(url).catch((e: unknown) => e);
        expect(error, url).toBeInstanceOf(OutboundRefusedError);
        expect(String(error), url).toMatch(reason);
      }
    } finally {
      await guarded.close();
    }
  });

  it("catches a name that resolved to a public address and resolves to loopback when connecting", async () => {
    let calls = 0;
    const rebinding = async () => [
      calls++ === 0 ? { address: "93.184.215.14", family: 4 } : { address: "127.0.0.1", family: 4 },
    ];
    // The first resolution passes (as a check made when a URL is configured would); the connection's does not.
    const guarded = createGuardedFetch(strict, { lookup: rebinding });
    try {
      await expect(
        resolveDestination(new URL(`https://rebinding.example:${port}/`), strict, rebinding),
      ).resolves.toEqual([{ address: "93.184.215.14", family: 4 }]);
      const error = await guarded.fetch(`https://rebinding.example:${port}/`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OutboundRefusedError);
      expect(String(error)).toMatch(/rebinding\.example resolves to a private.*127\.0\.0\.1/);
    } finally {
      await guarded.close();
    }
  });

  it("reaches loopback over http when ALLOW_PRIVATE_NETWORKS=true, with method, headers and body", async () => {
    const guarded = createGuardedFetch(policyOf({ ALLOW_PRIVATE_NETWORKS: "true" }));
    try {
      const reached = await guarded.fetch(`http://localhost:${port}/`);
      expect(reached.status).toBe(200);
      expect(await reached.text()).toBe("reached");
      const posted = await guarded.fetch(new URL(`http://127.0.0.1:${port}/echo`), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"a":1}',
      });
      expect(await posted.json()).toEqual({ got: '{"a":1}', type: "application/json" });
    } finally {
      await guarded.close();
    }
  });

  it("answers a redirect instead of following it", async () => {
    const guarded = createGuardedFetch({ allowPrivateNetworks: true });
    try {
      const redirected = await guarded.fetch(`http://127.0.0.1:${port}/redirect`);
      expect(redirected.status).toBe(302);
      expect(redirected.headers.get("location")).toBe(`http://127.0.0.1:${port}/private`);
    } finally {
      await guarded.close();
    }
  });

  it("fails a body over the size limit, declared or streamed", async () => {
    const guarded = createGuardedFetch({ allowPrivateNetworks: true }, { maxResponseBytes: 16 * 1024 });
    try {
      await expect(guarded.fetch(`http://127.0.0.1:${port}/large`)).rejects.toThrow(
        /larger than 16384 bytes/,
      );
      const streamed = await guarded.fetch(`http://127.0.0.1:${port}/stream`);
      await expect(streamed.text()).rejects.toThrow(/larger than 16384 bytes/);
    } finally {
      await guarded.close();
    }
  });

  it("stops a call that runs past its time limit, and honours the caller's signal", async () => {
    const guarded = createGuardedFetch({ allowPrivateNetworks: true }, { timeoutMs: 300 });
    try {
      const started = Date.now();
      // The limit covers the whole answer: it may end the call before its headers (a loaded machine) or while
      // its body is still coming; either way the call is stopped.
      const slow = async () => (await guarded.fetch(`http://127.0.0.1:${port}/slow`)).text();
      await expect(slow()).rejects.toThrow(/no complete answer within 300 ms|aborted due to timeout/);
      expect(Date.now() - started).toBeLessThan(1_500);
      const caller = new AbortController();
      caller.abort();
      await expect(guarded.fetch(`http://127.0.0.1:${port}/`, { signal: caller.signal })).rejects.toThrow(
        /abort/i,
      );
    } finally {
      await guarded.close();
    }
  });
});
