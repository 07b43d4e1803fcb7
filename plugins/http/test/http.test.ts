import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createGuardedFetch, type GuardedFetcher } from "@agentry/outbound";
import type { PluginHost, ToolContext } from "@agentry/plugin-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpConfig, httpPlugin, isAllowed } from "../src/index.js";

const request = httpPlugin.tools[0]!;
let server: Server;
let base: string;
const fetchers: GuardedFetcher[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/big") {
      res.end("x".repeat(5000));
    } else if (req.url === "/slow") {
      setTimeout(() => res.end("late"), 3_000);
    } else if (req.url === "/moved") {
      res.writeHead(301, { location: "http://169.254.169.254/" });
      res.end();
    } else {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        res.setHeader("content-type", "application/json");
        res.setHeader("x-internal", "not shown");
        res.end(
          JSON.stringify({
            method: req.method,
            path: req.url,
            body,
            type: req.headers["content-type"] ?? null,
          }),
        );
      });
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.close();
  await Promise.all(fetchers.map((each) => each.close()));
});

function contextFor(config: unknown, allowPrivateNetworks: boolean, signal = new AbortController().signal) {
  const guarded = createGuardedFetch({ allowPrivateNetworks });
  fetchers.push(guarded);
  return {
    config: httpPlugin.config.parse(config),
    secrets: {},
    signal,
    deadline: Date.now() + 30_000,
    host: { fetch: guarded.fetch, now: () => new Date() } as PluginHost,
  } as ToolContext<HttpConfig>;
}

describe("the allow list", () => {
  it("admits URLs under a prefix, and https on a host", () => {
    const allow = ["https://api.example.com/v1/", "status.example.org"];
    expect(isAllowed(new URL("https://api.example.com/v1/items?x=1"), allow)).toBe(true);
    expect(isAllowed(new URL("https://status.example.org/anything"), allow)).toBe(true);
    for (const url of [
      "https://api.example.com/v2/items",
      "https://api.example.com.evil.test/v1/",
      "http://status.example.org/",
      "https://status.example.org:8443/",
      "https://sub.status.example.org/",
    ]) {
      expect(isAllowed(new URL(url), allow), url).toBe(false);
    }
    // A prefix without a path is the origin's root, so it cannot be extended into another host.
    expect(isAllowed(new URL("https://api.example.com.evil.test/"), ["https://api.example.com"])).toBe(false);
  });

  it("refuses a config without entries or with entries that are not prefixes or hosts", () => {
    expect(httpPlugin.config.safeParse({ allow: [] }).success).toBe(false);
    for (const entry of [
      "ftp://x.example/",
      "https://u:p@x.example/",
      "not a url",
      "https://x.example/?q=1",
    ]) {
      expect(httpPlugin.config.safeParse({ allow: [entry] }).success, entry).toBe(false);
    }
    expect(httpPlugin.config.parse({ allow: ["x.example"] })).toEqual({
      allow: ["x.example"],
      maxResponseBytes: 65536,
      timeoutMs: 10000,
    });
  });
});

describe("request", () => {
  it("GETs and POSTs an allowed URL, showing status, main headers and body", async () => {
    const context = contextFor({ allow: [`${base}/api/`] }, true);
    await expect(request.call({ url: `${base}/api/items?q=1` }, context)).resolves.toEqual({
      status: 200,
      headers: { "content-type": "application/json", "content-length": expect.any(String) },
      body: JSON.stringify({ method: "GET", path: "/api/items?q=1", body: "", type: null }),
    });
    const posted = (await request.call(
      { method: "POST", url: `${base}/api/items`, body: '{"name":"x"}' },
      context,
    )) as { body: string };
    expect(JSON.parse(posted.body)).toEqual({
      method: "POST",
      path: "/api/items",
      body: '{"name":"x"}',
      type: "application/json",
    });
  });

  it("refuses a URL the config does not allow, before any request", async () => {
    const context = contextFor({ allow: [`${base}/api/`] }, true);
    await expect(request.call({ url: `${base}/admin` }, context)).rejects.toThrow(/is not allowed/);
    await expect(request.call({ url: "nope" }, context)).rejects.toThrow(/not an absolute URL/);
  });

  it("cuts a long answer at the size limit and stops a slow one at the time limit", async () => {
    const context = contextFor({ allow: [`${base}/`], maxResponseBytes: 1024, timeoutMs: 500 }, true);
    await expect(request.call({ url: `${base}/big` }, context)).resolves.toMatchObject({
      body: "x".repeat(1024),
      truncated: true,
    });
    await expect(request.call({ url: `${base}/slow` }, context)).rejects.toThrow(/within 500 ms/);
  });

  it("answers a redirect without following it", async () => {
    const context = contextFor({ allow: [`${base}/`] }, true);
    await expect(request.call({ url: `${base}/moved` }, context)).resolves.toMatchObject({
      status: 301,
      headers: { location: "http://169.254.169.254/" },
    });
  });

  it("is refused by the outbound guard for private destinations, even when the config allows them", async () => {
    const port = new URL(base).port;
    const context = contextFor(
      { allow: [`https://127.0.0.1:${port}/`, "https://localhost/", `${base}/`, "169.254.169.254"] },
      false,
    );
    await expect(request.call({ url: `https://127.0.0.1:${port}/x` }, context)).rejects.toThrow(
      /private, loopback or reserved address/,
    );
    await expect(request.call({ url: "https://localhost/x" }, context)).rejects.toThrow(
      /localhost resolves to a private/,
    );
    await expect(request.call({ url: `${base}/x` }, context)).rejects.toThrow(/must be an https URL/);
    await expect(request.call({ url: "https://169.254.169.254/latest/meta-data" }, context)).rejects.toThrow(
      /169\.254\.169\.254/,
    );
  });

  it("stops when the call is cancelled", async () => {
    const cancel = new AbortController();
    const context = contextFor({ allow: [`${base}/`] }, true, cancel.signal);
    const pending = request.call({ url: `${base}/slow` }, context);
    setTimeout(() => cancel.abort(), 50);
    await expect(pending).rejects.toThrow(/cancelled/);
  });
});
