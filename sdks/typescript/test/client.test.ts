import { afterEach, describe, expect, it, vi } from "vitest";
import {
  Agentry,
  AgentryError,
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
} from "../src/index.js";
import {
  AGENT_ID,
  abortError,
  agent,
  apiError,
  clientWith,
  connectionFailure,
  hang,
  json,
  mockFetch,
  reply,
} from "./helpers.js";

afterEach(() => {
  vi.unstubAllEnvs();
  vi.useRealTimers();
});

describe("configuration", () => {
  it("takes the key and base URL from the environment when not given", async () => {
    vi.stubEnv("AGENTRY_API_KEY", "agentry_sk_from_env");
    vi.stubEnv("AGENTRY_BASE_URL", "https://agents.example.test/v1/");
    const { fetch, requests } = mockFetch(() => json(200, { success: true, data: agent() }));
    const client = new Agentry({ fetch });
    expect(client.baseURL).toBe("https://agents.example.test/v1");
    await client.agents.get(AGENT_ID);
    expect(requests[0]!.url.href).toBe(`https://agents.example.test/v1/agents/${AGENT_ID}`);
    expect(requests[0]!.headers.get("authorization")).toBe("Bearer agentry_sk_from_env");
  });

  it("prefers the constructor's settings to the environment", () => {
    vi.stubEnv("AGENTRY_API_KEY", "agentry_sk_from_env");
    vi.stubEnv("AGENTRY_BASE_URL", "https://env.example.test/v1");
    const client = new Agentry({ apiKey: "agentry_sk_given", baseURL: "http://given.test/v1" });
    expect(client.baseURL).toBe("http://given.test/v1");
  });

  it("defaults to the local service, 30 s, 2 retries", () => {
    vi.stubEnv("AGENTRY_BASE_URL", "");
    const client = new Agentry({ apiKey: "k" });
    expect(client.baseURL).toBe("http://localhost:8080/v1");
    expect(client.timeout).toBe(30_000);
    expect(client.maxRetries).toBe(2);
    expect(client.maxRetryDelay).toBe(60_000);
    expect(client.lastRateLimit).toBeNull();
  });

  it("says clearly when there is no key", () => {
    vi.stubEnv("AGENTRY_API_KEY", "");
    expect(() => new Agentry()).toThrow(AgentryError);
    expect(() => new Agentry()).toThrow(/AGENTRY_API_KEY/);
  });

  it("refuses settings out of range", () => {
    expect(() => new Agentry({ apiKey: "k", timeout: 0 })).toThrow(/timeout/);
    expect(() => new Agentry({ apiKey: "k", maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => new Agentry({ apiKey: "k", maxRetries: 1.5 })).toThrow(/maxRetries/);
    expect(() => new Agentry({ apiKey: "k", baseURL: "localhost:8080" })).toThrow(/baseURL/);
  });

  it("does not show the key when the client is printed", () => {
    const client = new Agentry({ apiKey: "agentry_sk_secret_value" });
    expect(JSON.stringify(client)).not.toContain("secret_value");
    expect(String(Object.values(client))).not.toContain("secret_value");
  });

  it("withOptions keeps the other settings", async () => {
    const { fetch, requests } = mockFetch(() => json(200, { success: true, data: agent() }));
    const base = clientWith(fetch, { defaultHeaders: { "x-team": "core" } });
    const other = base.withOptions({ maxRetries: 0 });
    expect(other.maxRetries).toBe(0);
    await other.agents.get(AGENT_ID);
    expect(requests[0]!.headers.get("x-team")).toBe("core");
    expect(requests[0]!.url.origin).toBe("http://api.test");
  });
});

describe("requests", () => {
  it("sends JSON with the key, the SDK's name and the caller's headers", async () => {
    const { fetch, requests } = mockFetch(() => json(201, { success: true, data: agent() }));
    const client = clientWith(fetch, { defaultHeaders: { "x-team": "core", "x-override": "default" } });
    const created = await client.agents.create(
      { name: "Ada", bio: ["Counts"] },
      { headers: { "x-override": "call" } },
    );
    expect(created).toEqual(agent());
    const seen = requests[0]!;
    expect(seen.method).toBe("POST");
    expect(seen.url.pathname).toBe("/v1/agents");
    expect(seen.body).toEqual({ name: "Ada", bio: ["Counts"] });
    expect(seen.headers.get("content-type")).toBe("application/json");
    expect(seen.headers.get("accept")).toBe("application/json");
    expect(seen.headers.get("authorization")).toBe("Bearer agentry_sk_test");
    expect(seen.headers.get("user-agent")).toMatch(/^agentry-typescript\/\d+\.\d+\.\d+/);
    expect(seen.headers.get("x-team")).toBe("core");
    expect(seen.headers.get("x-override")).toBe("call");
  });

  it("maps every operation to its route", async () => {
    const { fetch, requests } = mockFetch(
      () => json(200, { success: true, data: agent({ name: "B" }) }),
      () => json(200, { success: true, data: { id: AGENT_ID, deleted: true } }),
      () => json(200, { success: true, data: reply() }),
      () => json(201, { success: true, data: { id: "key_1", key: "agentry_sk_x", scopes: ["agents:read"] } }),
      () => json(200, { success: true, data: [] }),
      () => json(200, { success: true, data: { id: "key_1", revoked: true } }),
    );
    const client = clientWith(fetch);
    expect((await client.agents.update(AGENT_ID, { name: "B", model: null })).name).toBe("B");
    expect(await client.agents.delete(AGENT_ID)).toEqual({ id: AGENT_ID, deleted: true });
    expect((await client.agents.messages.send(AGENT_ID, { text: "Hi", userId: "u1" })).text).toBe(
      "Hello there.",
    );
    await client.apiKeys.create({ scopes: ["agents:read"], expiresAt: new Date("2030-01-01T00:00:00Z") });
    expect(await client.apiKeys.list()).toEqual([]);
    expect(await client.apiKeys.revoke("key_1")).toEqual({ id: "key_1", revoked: true });
    expect(requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      `PATCH /v1/agents/${AGENT_ID}`,
      `DELETE /v1/agents/${AGENT_ID}`,
      `POST /v1/agents/${AGENT_ID}/messages`,
      "POST /v1/api-keys",
      "GET /v1/api-keys",
      "DELETE /v1/api-keys/key_1",
    ]);
    expect(requests[0]!.body).toEqual({ name: "B", model: null });
    expect(requests[2]!.body).toEqual({ text: "Hi", userId: "u1" });
    expect(requests[3]!.body).toEqual({ scopes: ["agents:read"], expiresAt: "2030-01-01T00:00:00.000Z" });
    expect(requests[1]!.headers.has("content-type")).toBe(false);
  });

  it("takes the caller's own object types for free-form fields", async () => {
    type Persona = { tone: string; traits: string[] };
    const personality: Persona = { tone: "dry", traits: ["precise"] };
    const { fetch, requests } = mockFetch(() => json(201, { success: true, data: agent() }));
    await clientWith(fetch).agents.create({
      name: "Ada",
      personality,
      clients: ["discord", { type: "telegram", chatId: 42 }],
      plugins: ["search", { name: "calc", config: { precision: 2 } }],
    });
    expect(requests[0]!.body).toMatchObject({
      personality,
      clients: ["discord", { type: "telegram", chatId: 42 }],
    });
  });

  it("escapes ids in paths and refuses empty ones before sending", async () => {
    const { fetch, requests } = mockFetch(() => apiError(404, "AGENT_NOT_FOUND"));
    const client = clientWith(fetch);
    await expect(client.agents.get("a/b?c")).rejects.toBeInstanceOf(NotFoundError);
    expect(requests[0]!.url.pathname).toBe("/v1/agents/a%2Fb%3Fc");
    await expect(client.agents.get("")).rejects.toThrow(/agentId must be a non-empty string/);
    expect(requests).toHaveLength(1);
  });

  it("records the rate-limit state of the last response, errors included", async () => {
    const { fetch } = mockFetch(
      () =>
        json(
          200,
          { success: true, data: agent() },
          {
            "x-ratelimit-limit": "60",
            "x-ratelimit-remaining": "59",
            "x-ratelimit-reset": "1767225660",
          },
        ),
      () => json(200, { success: true, data: agent() }),
      () =>
        apiError(429, "RATE_LIMIT_EXCEEDED", {
          headers: {
            "x-ratelimit-limit": "60",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": "1767225700",
            "retry-after": "40",
          },
        }),
    );
    const client = clientWith(fetch, { maxRetries: 0 });
    await client.agents.get(AGENT_ID);
    expect(client.lastRateLimit).toEqual({ limit: 60, remaining: 59, resetAt: new Date(1767225660 * 1000) });
    // A response without the headers leaves the last known state.
    await client.agents.get(AGENT_ID);
    expect(client.lastRateLimit?.remaining).toBe(59);
    await expect(client.agents.get(AGENT_ID)).rejects.toBeInstanceOf(RateLimitError);
    expect(client.lastRateLimit).toEqual({ limit: 60, remaining: 0, resetAt: new Date(1767225700 * 1000) });
  });
});

describe("conditional writes", () => {
  it("sends ifMatch as If-Match (an updatedAt as its ETag); 412 is a ConflictError, never retried", async () => {
    let calls = 0;
    const { fetch, requests } = mockFetch(() =>
      ++calls === 1
        ? json(200, { success: true, data: agent() })
        : apiError(412, "PRECONDITION_FAILED", { message: "Read it again." }),
    );
    const client = clientWith(fetch);
    await client.agents.update(AGENT_ID, { name: "B" }, { ifMatch: "2026-11-29T01:40:00.123Z" });
    const error = await client.agents
      .delete(AGENT_ID, { ifMatch: 'W/"2026-11-29T01:40:00.123Z"', headers: { "x-extra": "1" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 412, code: "PRECONDITION_FAILED" });
    expect(requests).toHaveLength(2);
    expect(requests.map((request) => request.headers.get("if-match"))).toEqual([
      'W/"2026-11-29T01:40:00.123Z"',
      'W/"2026-11-29T01:40:00.123Z"',
    ]);
    expect(requests[1]!.headers.get("x-extra")).toBe("1");
  });
});

describe("errors", () => {
  const cases: [number, string, new (...args: never[]) => APIError][] = [
    [400, "INVALID_REQUEST", BadRequestError],
    [401, "UNAUTHORIZED", AuthenticationError],
    [403, "FORBIDDEN", PermissionDeniedError],
    [403, "INSUFFICIENT_QUOTA", PermissionDeniedError],
    [404, "AGENT_NOT_FOUND", NotFoundError],
    [405, "METHOD_NOT_ALLOWED", BadRequestError],
    [409, "AGENT_INACTIVE", ConflictError],
    [409, "IDEMPOTENCY_KEY_IN_USE", ConflictError],
    [412, "PRECONDITION_FAILED", ConflictError],
    [422, "IDEMPOTENCY_KEY_REUSED", BadRequestError],
    [413, "PAYLOAD_TOO_LARGE", BadRequestError],
    [415, "UNSUPPORTED_MEDIA_TYPE", BadRequestError],
    [418, "TEAPOT", APIError],
    [429, "RATE_LIMIT_EXCEEDED", RateLimitError],
    [500, "INTERNAL_ERROR", InternalServerError],
    [502, "MODEL_ERROR", InternalServerError],
    [503, "AGENT_UNAVAILABLE", InternalServerError],
  ];
  for (const [status, code, ErrorClass] of cases) {
    it(`${status} ${code} is a ${ErrorClass.name} with status, code, request id and headers`, async () => {
      const { fetch } = mockFetch(() => apiError(status, code, { message: "It went wrong." }));
      const error = await clientWith(fetch, { maxRetries: 0 })
        .agents.get(AGENT_ID)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErrorClass);
      expect(error).toBeInstanceOf(APIError);
      expect(error).toBeInstanceOf(AgentryError);
      expect(error).toMatchObject({ status, code, requestId: "req_body", name: ErrorClass.name });
      expect((error as APIError).message).toBe(`${status} ${code}: It went wrong.`);
      expect((error as APIError).headers?.get("x-request-id")).toBe("req_header");
      if (ErrorClass === APIError) expect(Object.getPrototypeOf(error)).toBe(APIError.prototype);
    });
  }

  it("carries the field details of a 400", async () => {
    const details = [
      { field: "name", issue: "must not be empty" },
      { field: "bio[2]", issue: "must be a string" },
    ];
    const { fetch } = mockFetch(() => apiError(400, "INVALID_REQUEST", { details }));
    const error = (await clientWith(fetch)
      .agents.create({ name: "" })
      .catch((e: unknown) => e)) as BadRequestError;
    expect(error.details).toEqual(details);
    expect(error.retryAfter).toBeUndefined();
  });

  it("carries Retry-After of a 429", async () => {
    const { fetch } = mockFetch(() =>
      apiError(429, "RATE_LIMIT_EXCEEDED", { headers: { "retry-after": "17" } }),
    );
    const error = (await clientWith(fetch, { maxRetries: 0 })
      .agents.list()
      .catch((e: unknown) => e)) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(17);
  });

  it("copes with an error body that is not the API's (a proxy's HTML page)", async () => {
    const { fetch } = mockFetch(
      () =>
        new Response("<html>Bad gateway</html>", { status: 502, headers: { "content-type": "text/html" } }),
    );
    const error = (await clientWith(fetch, { maxRetries: 0 })
      .agents.get(AGENT_ID)
      .catch((e: unknown) => e)) as InternalServerError;
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.status).toBe(502);
    expect(error.code).toBeUndefined();
    expect(error.requestId).toBeUndefined();
    expect(error.message).toBe("502: <html>Bad gateway</html>");
  });

  it("reports a success body that is not JSON", async () => {
    const { fetch } = mockFetch(() => new Response("hello", { status: 200 }));
    await expect(clientWith(fetch).agents.get(AGENT_ID)).rejects.toThrow(/not JSON/);
  });
});

describe("retries", () => {
  it("retries an idempotent call on 5xx, 408, 429 and connection errors, up to maxRetries", async () => {
    const { fetch, requests } = mockFetch(
      () => apiError(500, "INTERNAL_ERROR"),
      connectionFailure("ECONNRESET"),
      () => json(200, { success: true, data: agent() }),
    );
    expect(await clientWith(fetch).agents.get(AGENT_ID)).toEqual(agent());
    expect(requests).toHaveLength(3);

    const always = mockFetch(() => apiError(503, "AGENT_UNAVAILABLE"));
    await expect(clientWith(always.fetch, { maxRetries: 3 }).agents.get(AGENT_ID)).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(always.requests).toHaveLength(4);

    const per = mockFetch(() => apiError(408, "TIMEOUT"));
    await expect(clientWith(per.fetch).agents.get(AGENT_ID, { maxRetries: 1 })).rejects.toBeInstanceOf(
      APIError,
    );
    expect(per.requests).toHaveLength(2);
  });

  it("does not retry with maxRetries 0, nor errors that will not fix themselves", async () => {
    for (const [response, count] of [
      [() => apiError(500, "INTERNAL_ERROR"), 1],
      [() => apiError(404, "AGENT_NOT_FOUND"), 1],
    ] as const) {
      const { fetch, requests } = mockFetch(response);
      await expect(clientWith(fetch, { maxRetries: 0 }).agents.get(AGENT_ID)).rejects.toBeInstanceOf(
        APIError,
      );
      expect(requests).toHaveLength(count);
    }
    for (const [status, code] of [
      [400, "INVALID_REQUEST"],
      [401, "UNAUTHORIZED"],
      [403, "FORBIDDEN"],
      [403, "INSUFFICIENT_QUOTA"],
      [404, "AGENT_NOT_FOUND"],
      [409, "AGENT_INACTIVE"],
      [422, "IDEMPOTENCY_KEY_REUSED"],
    ] as const) {
      const { fetch, requests } = mockFetch(() => apiError(status, code));
      await expect(clientWith(fetch).agents.messages.send(AGENT_ID, { text: "x" })).rejects.toBeInstanceOf(
        APIError,
      );
      expect(requests, code).toHaveLength(1);
    }
  });

  it("retries a create like a read, every attempt with the same Idempotency-Key", async () => {
    for (const [name, handler] of [
      ["429", () => apiError(429, "RATE_LIMIT_EXCEEDED", { headers: { "retry-after": "0" } })],
      ["refused connection", connectionFailure("ECONNREFUSED")],
      ["reset connection", connectionFailure("ECONNRESET")],
      ["500", () => apiError(500, "INTERNAL_ERROR")],
      ["503", () => apiError(503, "AGENT_UNAVAILABLE")],
    ] as const) {
      const { fetch, requests } = mockFetch(handler, handler, () =>
        json(201, { success: true, data: agent() }),
      );
      expect(await clientWith(fetch).agents.create({ name: "Ada" }), name).toEqual(agent());
      expect(requests, name).toHaveLength(3);
      const keys = requests.map((request) => request.headers.get("idempotency-key"));
      expect(keys[0], name).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(new Set(keys).size, name).toBe(1);
    }
  });

  it("retries a message on any 5xx, each attempt with the call's key", async () => {
    for (const [status, code] of [
      [503, "AGENT_UNAVAILABLE"],
      [502, "MODEL_ERROR"],
      [500, "INTERNAL_ERROR"],
    ] as const) {
      const ok = mockFetch(
        () => apiError(status, code),
        () => json(200, { success: true, data: reply() }),
      );
      expect((await clientWith(ok.fetch).agents.messages.send(AGENT_ID, { text: "x" })).text).toBe(
        "Hello there.",
      );
      expect(ok.requests, code).toHaveLength(2);
      expect(ok.requests[1]!.headers.get("idempotency-key")).toBe(
        ok.requests[0]!.headers.get("idempotency-key"),
      );
    }
    const { fetch, requests } = mockFetch(() => apiError(502, "MODEL_ERROR"));
    await expect(clientWith(fetch).agents.messages.send(AGENT_ID, { text: "x" })).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(requests).toHaveLength(3);
  });

  it("comes back after the Retry-After of 409 IDEMPOTENCY_KEY_IN_USE, when the first attempt has finished", async () => {
    vi.useFakeTimers();
    const { fetch, requests } = mockFetch(
      () => apiError(409, "IDEMPOTENCY_KEY_IN_USE", { headers: { "retry-after": "1" } }),
      () => json(201, { success: true, data: agent() }, { "idempotent-replayed": "true" }),
    );
    const result = clientWith(fetch, { maxRetryDelay: 60_000 }).agents.create(
      { name: "Ada" },
      { idempotencyKey: "create-ada" },
    );
    await vi.advanceTimersByTimeAsync(999);
    expect(requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(requests).toHaveLength(2);
    expect(await result).toEqual(agent());
    expect(requests.map((request) => request.headers.get("idempotency-key"))).toEqual([
      "create-ada",
      "create-ada",
    ]);
  });

  it("sends an Idempotency-Key with every write, a new one per call or the caller's own, and none with a read", async () => {
    const { fetch, requests } = mockFetch(
      () => json(201, { success: true, data: agent() }),
      () => json(201, { success: true, data: agent() }),
      () => json(200, { success: true, data: agent() }),
      () => json(200, { success: true, data: agent() }),
      () => json(200, { success: true, data: { id: AGENT_ID, deleted: true } }),
      () => json(200, { success: true, data: agent() }),
    );
    const client = clientWith(fetch);
    await client.agents.create({ name: "Ada" });
    await client.agents.create({ name: "Ada" });
    await client.agents.update(AGENT_ID, { name: "Eve" }, { idempotencyKey: "rename-to-eve" });
    await client.agents.update(AGENT_ID, { name: "Eve" });
    await client.agents.delete(AGENT_ID);
    await client.agents.get(AGENT_ID, { idempotencyKey: "ignored" });
    const keys = requests.map((request) => request.headers.get("idempotency-key"));
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys[2]).toBe("rename-to-eve");
    for (const key of [keys[0], keys[1], keys[3], keys[4]]) expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys.slice(0, 5)).size).toBe(5);
    expect(keys[5]).toBeNull();
  });

  it("gives up with the last error, as a connection error when there was no response", async () => {
    const { fetch, requests } = mockFetch(connectionFailure("ECONNREFUSED"));
    const error = (await clientWith(fetch)
      .agents.list()
      .catch((e: unknown) => e)) as APIConnectionError;
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error.status).toBeUndefined();
    expect(error.message).toContain("ECONNREFUSED");
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(requests).toHaveLength(3);
  });

  it("waits the server's Retry-After before retrying", async () => {
    vi.useFakeTimers();
    const { fetch, requests } = mockFetch(
      () => apiError(429, "RATE_LIMIT_EXCEEDED", { headers: { "retry-after": "3" } }),
      () => json(200, { success: true, data: agent() }),
    );
    const result = clientWith(fetch, { maxRetryDelay: 60_000 }).agents.get(AGENT_ID);
    await vi.advanceTimersByTimeAsync(2999);
    expect(requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(requests).toHaveLength(2);
    expect(await result).toEqual(agent());
  });

  it("cuts a long Retry-After to maxRetryDelay, and the error keeps the server's value", async () => {
    vi.useFakeTimers();
    const { fetch, requests } = mockFetch(() =>
      apiError(429, "RATE_LIMIT_EXCEEDED", { headers: { "retry-after": "58" } }),
    );
    const result = clientWith(fetch, { maxRetryDelay: 250, maxRetries: 1 })
      .agents.get(AGENT_ID)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(249);
    expect(requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    const error = (await result) as RateLimitError;
    expect(requests).toHaveLength(2);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(58);
  });

  it("backs off exponentially without Retry-After", async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, "random").mockReturnValue(0);
    const { fetch, requests } = mockFetch(() => apiError(500, "INTERNAL_ERROR"));
    const result = clientWith(fetch, { maxRetryDelay: 60_000, maxRetries: 3 })
      .agents.get(AGENT_ID)
      .catch((e: unknown) => e);
    const times: number[] = [];
    const start = Date.now();
    for (let i = 0; i < 40 && requests.length < 4; i++) {
      const before = requests.length;
      await vi.advanceTimersByTimeAsync(100);
      if (requests.length > before) times.push(Date.now() - start);
    }
    expect(times).toEqual([500, 1500, 3500]);
    expect(await result).toBeInstanceOf(InternalServerError);
    vi.restoreAllMocks();
  });
});

describe("timeouts and aborts", () => {
  it("times out each attempt, and retries an idempotent call after a timeout", async () => {
    const { fetch, requests } = mockFetch(hang, hang, () => json(200, { success: true, data: agent() }));
    expect(await clientWith(fetch, { timeout: 100 }).agents.get(AGENT_ID)).toEqual(agent());
    expect(requests).toHaveLength(3);
    expect(requests[0]!.signal.aborted).toBe(true);
  });

  it("resends a message that timed out with the same key, and throws APITimeoutError when every attempt did", async () => {
    const { fetch, requests } = mockFetch(hang);
    const error = await clientWith(fetch, { timeout: 30, maxRetryDelay: 0 })
      .agents.messages.send(AGENT_ID, { text: "x" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect((error as APITimeoutError).message).toMatch(/timed out after 30 ms/);
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((request) => request.headers.get("idempotency-key"))).size).toBe(1);
  });

  it("a per-call timeout overrides the client's", async () => {
    const { fetch } = mockFetch(hang);
    const started = Date.now();
    await expect(
      clientWith(fetch, { timeout: 60_000 }).agents.list({}, { timeout: 20, maxRetries: 0 }),
    ).rejects.toBeInstanceOf(APITimeoutError);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("covers reading the body, not only the headers", async () => {
    // Like real fetch, aborting the request errors a body still being read.
    const { fetch } = mockFetch(
      (request) =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"success":'));
              request.signal.addEventListener("abort", () => controller.error(abortError()));
            },
          }),
          { status: 200 },
        ),
    );
    await expect(
      clientWith(fetch, { timeout: 30 }).agents.get(AGENT_ID, { maxRetries: 0 }),
    ).rejects.toBeInstanceOf(APITimeoutError);
  });

  it("stops at once when the caller aborts, without retrying", async () => {
    const { fetch, requests } = mockFetch(hang);
    const controller = new AbortController();
    const result = clientWith(fetch).agents.get(AGENT_ID, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    await expect(result).rejects.toBeInstanceOf(APIUserAbortError);
    expect(requests).toHaveLength(1);
    await expect(
      clientWith(fetch).agents.get(AGENT_ID, { signal: AbortSignal.abort() }),
    ).rejects.toBeInstanceOf(APIUserAbortError);
    expect(requests).toHaveLength(1);
  });

  it("an abort during the wait before a retry ends the call", async () => {
    vi.useFakeTimers();
    const { fetch, requests } = mockFetch(() => apiError(503, "AGENT_UNAVAILABLE"));
    const controller = new AbortController();
    const result = clientWith(fetch, { maxRetryDelay: 60_000 })
      .agents.get(AGENT_ID, { signal: controller.signal })
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    expect(await result).toBeInstanceOf(APIUserAbortError);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(requests).toHaveLength(1);
  });
});
