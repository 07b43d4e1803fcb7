import { once } from "node:events";
import http2 from "node:http2";
import { AUDIT_HEADERS, type AuditStamp, currentAuditStamp } from "@agentry/core";
import { AppError, fromConnectError } from "@agentry/errors";
import { silentLogger } from "@agentry/logging";
import {
  AccountSchema,
  AccountService,
  CreateAccountResponseSchema,
  ListAccountsResponseSchema,
} from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { createRpcServer, type RpcServer, remoteService } from "../src/index.js";

let server: RpcServer | undefined;
afterEach(async () => {
  await server?.shutdown();
  server = undefined;
});

type Impl = Parameters<Parameters<typeof createRpcServer>[0]["routes"]>[0];

async function start(options: {
  listAccounts?: () => Promise<string[]>;
  dependencies?: Record<string, () => Promise<boolean>>;
  shutdownGraceMs?: number;
}): Promise<string> {
  server = createRpcServer({
    logger: silentLogger(),
    routes: (router: Impl) =>
      router.service(AccountService, {
        async listAccounts() {
          const names = await (options.listAccounts ?? (async () => []))();
          return create(ListAccountsResponseSchema, {
            accounts: names.map((name) => create(AccountSchema, { id: `acct_${name}`, name })),
          });
        },
        async getAccount(request) {
          const id = request.lookup.case === "id" ? request.lookup.value : "";
          if (id === "acct_bug") throw new Error("a bug with /secret/path in it");
          throw new AppError("UNAUTHORIZED", `Account ${id} does not exist.`);
        },
      }),
    ...(options.dependencies ? { dependencies: options.dependencies } : {}),
    shutdownGraceMs: options.shutdownGraceMs ?? 60_000,
  });
  const { port } = await server.listen(0, "127.0.0.1");
  return `http://127.0.0.1:${port}`;
}

/** A GET over HTTP/2 without TLS, on a connection of its own. */
async function get(baseUrl: string, path: string): Promise<[number, unknown]> {
  const session = http2.connect(baseUrl);
  try {
    const request = session.request({ ":path": path });
    const [headers] = (await once(request, "response")) as [http2.IncomingHttpHeaders];
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
    });
    await once(request, "end");
    return [Number(headers[":status"]), JSON.parse(body)];
  } finally {
    session.close();
  }
}

describe("createRpcServer", () => {
  it("serves Connect and gRPC over HTTP/2, and errors keep their public code", async () => {
    const baseUrl = await start({ listAccounts: async () => ["acme"] });
    const connect = createClient(AccountService, createConnectTransport({ baseUrl, httpVersion: "2" }));
    const grpc = createClient(AccountService, createGrpcTransport({ baseUrl }));
    for (const client of [connect, grpc]) {
      expect((await client.listAccounts({})).accounts.map((a) => a.name)).toEqual(["acme"]);
      const refused = await client
        .getAccount({ lookup: { case: "id", value: "acct_x" } })
        .catch((e: unknown) => e);
      expect(fromConnectError(refused)).toMatchObject({
        code: "UNAUTHORIZED",
        message: "Account acct_x does not exist.",
      });
      // A bug's message stays in the service's log; the caller learns only that it was internal.
      const bug = fromConnectError(
        await client.getAccount({ lookup: { case: "id", value: "acct_bug" } }).catch((e: unknown) => e),
      );
      expect(bug).toMatchObject({ code: "INTERNAL_ERROR", message: "Internal error." });
    }
  });

  it("answers /healthz always and /readyz with each dependency's state, 503 only once draining", async () => {
    let database = true;
    const baseUrl = await start({ dependencies: { database: async () => database } });
    expect(await get(baseUrl, "/healthz")).toEqual([200, { status: "ok" }]);
    expect(await get(baseUrl, "/readyz")).toEqual([
      200,
      { status: "ready", dependencies: { database: "up" } },
    ]);
    database = false;
    // Every instance shares the database: callers get the service's own 503 rather than no instance at all.
    expect(await get(baseUrl, "/readyz")).toEqual([
      200,
      { status: "ready", dependencies: { database: "down" } },
    ]);
    expect((await get(baseUrl, "/nothing-here"))[0]).toBe(404);
    server!.drain();
    expect(await get(baseUrl, "/readyz")).toEqual([503, { status: "draining" }]);
    expect(await get(baseUrl, "/healthz")).toEqual([200, { status: "ok" }]);
  });

  it("finishes calls in flight on shutdown, without waiting on idle connections", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => {};
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const baseUrl = await start({
      listAccounts: async () => {
        entered();
        await held;
        return ["acme"];
      },
    });
    const accounts = createClient(AccountService, createConnectTransport({ baseUrl, httpVersion: "2" }));
    const call = accounts.listAccounts({});
    await inside;
    const stopped = server!.shutdown();
    let stoppedEarly = false;
    void stopped.then(() => {
      stoppedEarly = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stoppedEarly).toBe(false);

    release();
    expect((await call).accounts.map((a) => a.name)).toEqual(["acme"]);
    await stopped;
    expect(server!.server.listening).toBe(false);
  });

  it("cuts calls that outlast the grace period", async () => {
    const baseUrl = await start({ listAccounts: () => new Promise(() => {}), shutdownGraceMs: 200 });
    const accounts = createClient(AccountService, createConnectTransport({ baseUrl, httpVersion: "2" }));
    const call = accounts.listAccounts({}).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await server!.shutdown();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(fromConnectError(await call).code).toBe("AGENT_UNAVAILABLE");
  });
});

describe("a remote service's answers", () => {
  it("come uncompressed, where a client asking for gzip gets a large one gzipped", async () => {
    const names = Array.from({ length: 200 }, (_, i) => `account-with-a-long-name-${i}`);
    const url = await start({ listAccounts: async () => names });
    const encodings: (string | null)[] = [];
    const capture: Interceptor = (next) => async (request) => {
      const response = await next(request);
      encodings.push(response.header.get("content-encoding"));
      return response;
    };
    const ours = remoteService({ url, name: "accounts", logger: silentLogger(), interceptors: [capture] });
    const answer = await createClient(AccountService, ours.transport).listAccounts({});
    expect(answer.accounts).toHaveLength(200);
    const gzipping = createConnectTransport({ baseUrl: url, httpVersion: "2", interceptors: [capture] });
    await createClient(AccountService, gzipping).listAccounts({});
    expect(encodings).toEqual([null, "gzip"]);
  });
});

describe("the audit scope of a served call", () => {
  it("runs a change as the actor its headers name, and a read without a scope of its own", async () => {
    const seen: Record<string, AuditStamp | null> = {};
    server = createRpcServer({
      logger: silentLogger(),
      routes: (router: Impl) =>
        router.service(AccountService, {
          async createAccount() {
            seen.createAccount = currentAuditStamp();
            return create(CreateAccountResponseSchema, {});
          },
          async listAccounts() {
            seen.listAccounts = currentAuditStamp();
            return create(ListAccountsResponseSchema, {});
          },
        }),
    });
    const { port } = await server.listen(0, "127.0.0.1");
    const client = createClient(
      AccountService,
      createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "2" }),
    );
    const headers = {
      [AUDIT_HEADERS.actorType]: "member",
      [AUDIT_HEADERS.actorId]: "mem_1",
      [AUDIT_HEADERS.ip]: "10.0.0.1",
      [AUDIT_HEADERS.requestId]: "req_1",
    };
    await client.createAccount({ name: "acme" }, { headers });
    await client.listAccounts({}, { headers });
    expect(seen.createAccount).toEqual({
      actor: { type: "member", id: "mem_1" },
      ip: "10.0.0.1",
      requestId: "req_1",
    });
    // ListAccounts is declared without side effects: it records nothing, so no stamp is set up for it.
    expect(seen.listAccounts).toBeNull();
  });
});
