import { Writable } from "node:stream";
import { createLogger } from "@agentry/logging";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

let h: Harness;
let tenant: Tenant;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  h = await startHarness(
    {},
    createLogger({ service: "gateway", level: "debug", format: "json", destination: sink }),
  );
  tenant = await h.tenant();
});
afterAll(() => h.close());

describe("unknown routes and methods", () => {
  it("answers JSON 404 NOT_FOUND for an unknown route, with or without a key", async () => {
    for (const key of [tenant.key, null]) {
      const res = await h.request<ErrorBody>("GET", "/v1/nothing-here", { key });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/application\/json/);
      expect(res.body.error.code).toBe("NOT_FOUND");
    }
  });

  it("answers 405 METHOD_NOT_ALLOWED with Allow for a known path", async () => {
    const res = await h.request<ErrorBody>("PUT", "/v1/agents", { key: tenant.key, body: {} });
    expect(res.status).toBe(405);
    expect(res.body.error.code).toBe("METHOD_NOT_ALLOWED");
    expect(res.headers.get("allow")).toContain("POST");
    const item = await h.request<ErrorBody>("POST", "/v1/agents/agt_01JAAAAAAAAAAAAAAAAAAAAAAA", {
      key: tenant.key,
      body: {},
    });
    expect(item.status).toBe(405);
    expect(item.headers.get("allow")).toContain("PATCH");
  });
});

describe("request ids", () => {
  it("reuses a valid incoming X-Request-Id and repeats it in errors", async () => {
    const res = await h.request<ErrorBody>("GET", "/v1/agents/agt_01JAAAAAAAAAAAAAAAAAAAAAAA", {
      key: tenant.key,
      headers: { "x-request-id": "trace-abc.123" },
    });
    expect(res.headers.get("x-request-id")).toBe("trace-abc.123");
    expect(res.body.error.requestId).toBe("trace-abc.123");
  });

  it("replaces an unsafe incoming id", async () => {
    const res = await h.request("GET", "/healthz", { headers: { "x-request-id": "bad id with spaces" } });
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9A-Z]{26}$/);
  });

  it("puts the request id on every log line written while serving the request", async () => {
    lines.length = 0;
    await h.request("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "logged" },
      headers: { "x-request-id": "log-check-1" },
    });
    // The access line is written once the response has gone.
    await vi.waitFor(() =>
      expect(lines.some((line) => line.requestId === "log-check-1" && line.msg === "request")).toBe(true),
    );
    const mine = lines.filter((line) => line.requestId === "log-check-1");
    expect(mine.some((line) => line.msg === "request" && line.status === 201)).toBe(true);
    expect(
      lines.filter((line) => line.msg === "request").every((line) => typeof line.requestId === "string"),
    ).toBe(true);
    expect(JSON.stringify(lines)).not.toContain(tenant.key);
  });
});

describe("health", () => {
  it("serves /healthz and /readyz without a key", async () => {
    expect((await h.request("GET", "/healthz")).body).toEqual({ status: "ok" });
    const ready = await h.request("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      status: "ready",
      dependencies: { connectors: "up", conversation: "up", registry: "up", webhooks: "up" },
    });
  });
});

describe("internal errors", () => {
  it("never leak their cause", async () => {
    const original = h.gateway.context.agents.getAgent;
    h.gateway.context.agents.getAgent = () => Promise.reject(new Error("SQLITE_CORRUPT at /secret/path"));
    try {
      const res = await h.request<ErrorBody>("GET", "/v1/agents/agt_01JAAAAAAAAAAAAAAAAAAAAAAA", {
        key: tenant.key,
      });
      expect(res.status).toBe(500);
      expect(res.body.error.code).toBe("INTERNAL_ERROR");
      expect(JSON.stringify(res.body)).not.toContain("SQLITE");
      expect(lines.some((line) => JSON.stringify(line).includes("SQLITE_CORRUPT"))).toBe(true);
    } finally {
      h.gateway.context.agents.getAgent = original;
    }
  });
});
