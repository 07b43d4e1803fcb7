import http2 from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { AppError, fromConnectError } from "@agentry/errors";
import { silentLogger } from "@agentry/logging";
import {
  AccountSchema,
  AccountService,
  ConversationService,
  ListAccountsResponseSchema,
} from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createClient,
  type HandlerContext,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { createH2Transport, createRpcServer, type H2Transport, remoteService } from "../src/index.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A connect-node server over HTTP/2 without TLS, as every service serves, with the sessions it has had. */
interface Served {
  url: string;
  port: number;
  sessions: number;
  stop(): Promise<void>;
  /** Drops every connection at once, as a process that dies does. */
  cut(): void;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(routes: (router: ConnectRouter) => void, port = 0): Promise<Served> {
  const server = http2.createServer(connectNodeAdapter({ routes }));
  const open = new Set<http2.ServerHttp2Session>();
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const served: Served = {
    url: "",
    port: 0,
    sessions: 0,
    stop: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        for (const session of open) session.close();
      }),
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
  server.on("session", (session) => {
    served.sessions += 1;
    open.add(session);
    session.once("close", () => open.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  served.port = (server.address() as AddressInfo).port;
  served.url = `http://127.0.0.1:${served.port}`;
  cleanups.push(() => served.stop());
  return served;
}

function ours(url: string, interceptors: Interceptor[] = []): H2Transport {
  const transport = createH2Transport({ baseUrl: url, interceptors });
  cleanups.push(() => transport.close());
  return transport;
}

function theirs(url: string, interceptors: Interceptor[] = []): Transport {
  return createConnectTransport({ baseUrl: url, httpVersion: "2", acceptCompression: [], interceptors });
}

/** What a caller can see of a failure: its code, message, details and metadata. */
async function failureOf(call: Promise<unknown>) {
  const error = await call.then(
    () => {
      throw new Error("the call succeeded");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  const failure = error as ConnectError;
  const metadata = [...failure.metadata].filter(([key]) => key !== "date");
  return {
    code: failure.code,
    message: failure.rawMessage,
    details: failure.details.map((d) =>
      "desc" in d ? d : { ...d, value: Buffer.from(d.value).toString("hex") },
    ),
    metadata,
  };
}

describe("the HTTP/2 unary transport", () => {
  it("answers as connect-node's transport does, with the caller's headers reaching the handler", async () => {
    const seen: (string | null)[][] = [];
    const { url } = await serve((router) =>
      router.service(AccountService, {
        listAccounts(_request, context) {
          seen.push([
            context.requestHeader.get("x-request-id"),
            context.requestHeader.get("x-agentry-actor-type"),
            context.requestHeader.get("content-type"),
            context.requestHeader.get("connect-protocol-version"),
            context.requestHeader.get("connect-timeout-ms"),
          ]);
          context.responseHeader.set("x-answered-by", "accounts");
          context.responseTrailer.set("x-rows", "2");
          return create(ListAccountsResponseSchema, {
            accounts: [{ id: "acct_1", name: "acme" }, { id: "acct_2" }],
          });
        },
      }),
    );
    const headers = { "X-Request-Id": "req_1", "x-agentry-actor-type": "member" };
    const answers = [];
    for (const transport of [ours(url), theirs(url)]) {
      let header: Headers | undefined;
      let trailer: Headers | undefined;
      const answer = await createClient(AccountService, transport).listAccounts(
        {},
        { headers, onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) },
      );
      answers.push({ answer, header: header?.get("x-answered-by"), trailer: [...(trailer ?? [])] });
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.answer.accounts.map((a) => a.id)).toEqual(["acct_1", "acct_2"]);
    expect(answers[0]!.answer.$typeName).toBe("agentry.registry.v1.ListAccountsResponse");
    expect(answers[0]!.header).toBe("accounts");
    expect(answers[0]!.trailer).toEqual([["x-rows", "2"]]);
    expect(seen[0]).toEqual(["req_1", "member", "application/proto", "1", null]);
    expect(seen[0]).toEqual(seen[1]);
  });

  it("fails with every code as connect-node's transport does: message, details and metadata", async () => {
    const detail = { desc: AccountSchema, value: { id: "acct_detail", name: "in the details" } };
    const { url } = await serve((router) =>
      router.service(AccountService, {
        getAccount(request) {
          const code = Number(request.lookup.value) as Code;
          const metadata = new Headers({ "x-agentry-error-code": `CODE_${code}`, "x-extra": "a b%20" });
          throw new ConnectError(`failed with ${Code[code]}`, code, metadata, [detail]);
        },
      }),
    );
    const codes = Object.values(Code).filter((c): c is Code => typeof c === "number");
    expect(codes).toHaveLength(16);
    for (const code of codes) {
      const input = { lookup: { case: "id" as const, value: String(code) } };
      const mine = await failureOf(createClient(AccountService, ours(url)).getAccount(input));
      const connects = await failureOf(createClient(AccountService, theirs(url)).getAccount(input));
      expect(mine, Code[code]).toEqual(connects);
      expect(mine.code).toBe(code);
      expect(mine.message).toBe(`failed with ${Code[code]}`);
      expect(mine.details).toHaveLength(1);
      expect(mine.metadata).toContainEqual(["x-agentry-error-code", `CODE_${code}`]);
    }
  });

  it("delivers the services' own errors whole, as the gateway reads them", async () => {
    const server = createRpcServer({
      logger: silentLogger(),
      routes: (router) =>
        router.service(AccountService, {
          async getAccount() {
            throw new AppError("INVALID_REQUEST", "The name is taken.", {
              details: [{ field: "name", issue: "taken" }],
              retryAfterSeconds: 3,
            });
          },
        }),
    });
    cleanups.push(() => server.shutdown());
    const { port } = await server.listen(0, "127.0.0.1");
    const remote = remoteService({
      url: `http://127.0.0.1:${port}`,
      name: "accounts",
      logger: silentLogger(),
    });
    const error = await createClient(AccountService, remote.transport)
      .getAccount({})
      .then(
        () => {
          throw new Error("the call succeeded");
        },
        (e: unknown) => fromConnectError(e),
      );
    expect({
      code: error.code,
      message: error.message,
      details: error.details,
      retryAfterSeconds: error.retryAfterSeconds,
    }).toEqual({
      code: "INVALID_REQUEST",
      message: "The name is taken.",
      details: [{ field: "name", issue: "taken" }],
      retryAfterSeconds: 3,
    });
  });

  it("answers a method the server does not serve, and a server that is not there, as connect-node does", async () => {
    const { url } = await serve((router) => router.service(AccountService, {}));
    const unserved = createClient(ConversationService, ours(url)).deleteConversation({});
    expect(await failureOf(unserved)).toEqual(
      await failureOf(createClient(ConversationService, theirs(url)).deleteConversation({})),
    );
    expect((await failureOf(createClient(ConversationService, ours(url)).deleteConversation({}))).code).toBe(
      Code.Unimplemented,
    );
    const gone = await serve((router) => router.service(AccountService, {}));
    await gone.stop();
    const refused = await failureOf(createClient(AccountService, ours(gone.url)).listAccounts({}));
    expect(refused).toEqual(await failureOf(createClient(AccountService, theirs(gone.url)).listAccounts({})));
    expect(refused.code).toBe(Code.Unavailable);
  });

  it("sends the deadline, fails with DeadlineExceeded when it passes, and the handler's signal fires", async () => {
    let sent: string | null = null;
    const handlerAborted: Promise<unknown>[] = [];
    const { url } = await serve((router) =>
      router.service(AccountService, {
        async listAccounts(_request, context: HandlerContext) {
          sent = context.requestHeader.get("connect-timeout-ms");
          handlerAborted.push(
            new Promise((resolve) => context.signal.addEventListener("abort", () => resolve(true))),
          );
          await sleep(2_000);
          return {};
        },
      }),
    );
    const started = Date.now();
    const mine = await failureOf(
      createClient(AccountService, ours(url)).listAccounts({}, { timeoutMs: 100 }),
    );
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(sent).toBe("100");
    expect(mine).toEqual({
      code: Code.DeadlineExceeded,
      message: "the operation timed out",
      details: [],
      metadata: [],
    });
    expect(await handlerAborted[0]).toBe(true);
    expect(mine).toEqual(
      await failureOf(createClient(AccountService, theirs(url)).listAccounts({}, { timeoutMs: 100 })),
    );
  });

  it("cancels a call when the caller's signal aborts, before or during the call", async () => {
    const handlerAborted: Promise<unknown>[] = [];
    const { url } = await serve((router) =>
      router.service(AccountService, {
        async listAccounts(_request, context: HandlerContext) {
          handlerAborted.push(
            new Promise((resolve) => context.signal.addEventListener("abort", () => resolve(true))),
          );
          await sleep(2_000);
          return {};
        },
      }),
    );
    const client = createClient(AccountService, ours(url));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const during = await failureOf(client.listAccounts({}, { signal: controller.signal }));
    expect(during).toEqual({
      code: Code.Canceled,
      message: "This operation was aborted",
      details: [],
      metadata: [],
    });
    expect(await handlerAborted[0]).toBe(true);

    const theirController = new AbortController();
    setTimeout(() => theirController.abort(), 50);
    expect(
      await failureOf(
        createClient(AccountService, theirs(url)).listAccounts({}, { signal: theirController.signal }),
      ),
    ).toEqual(during);

    const before = await failureOf(client.listAccounts({}, { signal: AbortSignal.abort("gave up") }));
    expect(before).toMatchObject({ code: Code.Canceled, message: "gave up" });
  });

  it("opens a new connection after the server restarts, and after a GOAWAY", async () => {
    const routes = (router: ConnectRouter) =>
      router.service(AccountService, { listAccounts: () => ({ accounts: [{ id: "acct_1" }] }) });
    const first = await serve(routes);
    const client = createClient(AccountService, ours(first.url));
    expect((await client.listAccounts({})).accounts).toHaveLength(1);
    await client.listAccounts({});
    expect(first.sessions).toBe(1);
    await first.stop();
    expect((await failureOf(client.listAccounts({}))).code).toBe(Code.Unavailable);
    const second = await serve(routes, first.port);
    expect((await client.listAccounts({})).accounts).toHaveLength(1);
    await client.listAccounts({});
    expect(second.sessions).toBe(1);
  });

  it("fails a call in flight when its connection drops as connect-node's transport does, then reconnects", async () => {
    let calls = 0;
    const served = await serve((router) =>
      router.service(AccountService, {
        async listAccounts() {
          calls += 1;
          if (calls <= 2) setTimeout(() => served.cut(), 20);
          await sleep(calls <= 2 ? 1_000 : 0);
          return { accounts: [{ id: "acct_1" }] };
        },
      }),
    );
    const client = createClient(AccountService, ours(served.url));
    const mine = await failureOf(client.listAccounts({}));
    const connects = await failureOf(createClient(AccountService, theirs(served.url)).listAccounts({}));
    expect(mine).toEqual(connects);
    // Node reports a dropped connection's streams as cancelled.
    expect(mine.code).toBe(Code.Canceled);
    expect((await client.listAccounts({})).accounts).toHaveLength(1);
  });

  it("carries messages of several megabytes both ways", async () => {
    const name = "x".repeat(3 * 1024 * 1024);
    const { url } = await serve((router) =>
      router.service(AccountService, {
        createAccount: (request) => ({ account: { id: "acct_big", name: request.name } }),
        listAccounts: () => ({
          accounts: Array.from({ length: 20_000 }, (_, i) => ({
            id: `acct_${i}`,
            name: `account ${i} `.repeat(20),
          })),
        }),
      }),
    );
    const client = createClient(AccountService, ours(url));
    const created = await client.createAccount({ name });
    expect(created.account?.name).toBe(name);
    const listed = await client.listAccounts({});
    expect(listed.accounts).toHaveLength(20_000);
    expect(listed.accounts[19_999]?.name).toBe("account 19999 ".repeat(20));
  });

  it("runs concurrent calls on one connection, each getting its own answer", async () => {
    const served = await serve((router) =>
      router.service(AccountService, {
        async getAccount(request) {
          await sleep(Math.random() * 30);
          return { account: { id: String(request.lookup.value) } };
        },
      }),
    );
    const client = createClient(AccountService, ours(served.url));
    const ids = Array.from({ length: 300 }, (_, i) => `acct_${i}`);
    const answers = await Promise.all(
      ids.map((id) => client.getAccount({ lookup: { case: "id", value: id } })),
    );
    expect(answers.map((a) => a.account?.id)).toEqual(ids);
    expect(served.sessions).toBe(1);
  });

  it("runs interceptors outermost first, with the headers and answers they read and change", async () => {
    let received: string | null = null;
    const { url } = await serve((router) =>
      router.service(AccountService, {
        listAccounts(_request, context) {
          received = context.requestHeader.get("traceparent");
          context.responseHeader.set("x-answer", "yes");
          return {};
        },
      }),
    );
    const order: string[] = [];
    const outer: Interceptor = (next) => async (request) => {
      order.push(`outer ${request.method.name} ${request.url}`);
      const response = await next(request);
      order.push(`outer saw ${response.header.get("x-answer")}`);
      return response;
    };
    const tracing: Interceptor = (next) => async (request) => {
      order.push(`tracing ${request.header.get("x-request-id")} ${request.signal.aborted}`);
      request.header.set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
      return next(request);
    };
    await createClient(AccountService, ours(url, [outer, tracing])).listAccounts(
      {},
      { headers: { "x-request-id": "req_2" } },
    );
    expect(order).toEqual([
      `outer ListAccounts ${url}/agentry.registry.v1.AccountService/ListAccounts`,
      "tracing req_2 false",
      "outer saw yes",
    ]);
    expect(received).toBe("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  });

  it("streams through connect-node's transport on the same connection", async () => {
    const served = await serve((router) =>
      router.service(ConversationService, {
        async *watchMessage(request) {
          for (let i = 1; i <= 3; i++) yield { sequence: BigInt(i) + request.after };
        },
        deleteConversation: () => ({}),
      }),
    );
    const client = createClient(ConversationService, ours(served.url));
    await client.deleteConversation({});
    const sequences: bigint[] = [];
    for await (const event of client.watchMessage({ after: 10n })) sequences.push(event.sequence);
    expect(sequences).toEqual([11n, 12n, 13n]);
    expect(served.sessions).toBe(1);
  });
});
