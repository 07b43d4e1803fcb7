import { AppError, fromConnectError, toConnectError } from "@agentry/errors";
import { requestScopeInterceptor } from "@agentry/observability";
import { AgentService, AgentStatus, ConversationService } from "@agentry/proto";
import { Code, ConnectError, createClient, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createInProcessTransport } from "../src/index.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves when the signal aborts, with its reason. */
const aborted = (signal: AbortSignal) =>
  new Promise<unknown>((resolve) => signal.addEventListener("abort", () => resolve(signal.reason)));

describe("the in-process transport", () => {
  it("hands both sides complete messages and the caller's headers", async () => {
    let seen: { pageSize: number; status: AgentStatus | undefined; requestId: string | null } | undefined;
    const transport = createInProcessTransport((router) =>
      router.service(AgentService, {
        listAgents(request, context) {
          seen = {
            pageSize: request.pageSize,
            status: request.status,
            requestId: context.requestHeader.get("x-request-id"),
          };
          return { totalSize: 3 };
        },
      }),
    );
    const response = await createClient(AgentService, transport).listAgents(
      { accountId: "acct_1" },
      { headers: { "x-request-id": "req_in_process" } },
    );
    expect(seen).toEqual({ pageSize: 0, status: AgentStatus.UNSPECIFIED, requestId: "req_in_process" });
    expect(response.totalSize).toBe(3);
    expect(response.agents).toEqual([]);
    expect(response.$typeName).toBe("agentry.registry.v1.ListAgentsResponse");
  });

  it("delivers a handler's error with its code and public details, as the network would", async () => {
    const transport = createInProcessTransport((router) =>
      router.service(AgentService, {
        getAgent() {
          throw toConnectError(new AppError("AGENT_NOT_FOUND", "Agent agt_1 does not exist."));
        },
        deleteAgent() {
          throw new Error("a bug");
        },
      }),
    );
    const agents = createClient(AgentService, transport);
    const notFound = await agents.getAgent({ accountId: "acct_1", id: "agt_1" }).catch((error) => error);
    expect(notFound).toBeInstanceOf(ConnectError);
    expect((notFound as ConnectError).code).toBe(Code.NotFound);
    const appError = fromConnectError(notFound as ConnectError);
    expect(appError.code).toBe("AGENT_NOT_FOUND");
    expect(appError.message).toBe("Agent agt_1 does not exist.");

    const bug = await agents.deleteAgent({ accountId: "acct_1", id: "agt_1" }).catch((error) => error);
    expect((bug as ConnectError).code).toBe(Code.Unknown);
  });

  it("runs client interceptors around server interceptors around the handler", async () => {
    const order: string[] = [];
    const tag =
      (name: string): Interceptor =>
      (next) =>
      async (request) => {
        order.push(`${name} in`);
        const response = await next(request);
        order.push(`${name} out`);
        return response;
      };
    const transport = createInProcessTransport(
      (router) =>
        router.service(AgentService, {
          getAgent() {
            order.push("handler");
            return {};
          },
        }),
      { clientInterceptors: [tag("client")], serverInterceptors: [tag("server")] },
    );
    await createClient(AgentService, transport).getAgent({});
    expect(order).toEqual(["client in", "server in", "handler", "server out", "client out"]);
  });

  it("ends a call at its deadline, and the handler's signal tells it to stop", async () => {
    let handlerSignal: AbortSignal | undefined;
    const transport = createInProcessTransport((router) =>
      router.service(AgentService, {
        async getAgent(_request, context: HandlerContext) {
          handlerSignal = context.signal;
          await sleep(1000);
          return {};
        },
      }),
    );
    const started = performance.now();
    const error = await createClient(AgentService, transport)
      .getAgent({}, { timeoutMs: 50 })
      .catch((e) => e);
    expect(performance.now() - started).toBeLessThan(900);
    expect((error as ConnectError).code).toBe(Code.DeadlineExceeded);
    expect(handlerSignal?.aborted).toBe(true);
  });

  it("fires a handler's signal once its call is over, even when the handler reads it only afterwards", async () => {
    let context: HandlerContext | undefined;
    let readDuringCall: AbortSignal | undefined;
    const transport = createInProcessTransport((router) =>
      router.service(AgentService, {
        async getAgent(request, handlerContext) {
          context = handlerContext;
          if (request.id === "watch") readDuringCall = handlerContext.signal;
          return {};
        },
      }),
    );
    const client = createClient(AgentService, transport);
    await client.getAgent({ id: "watch" });
    expect(readDuringCall?.aborted).toBe(true);
    expect((readDuringCall!.reason as ConnectError).code).toBe(Code.Canceled);
    await client.getAgent({ id: "late" });
    expect(context?.signal.aborted).toBe(true);
    expect((context!.signal.reason as ConnectError).code).toBe(Code.Canceled);
  });

  it("cancels the call when the caller's signal aborts", async () => {
    const controller = new AbortController();
    let handlerAborted: Promise<unknown> | undefined;
    const transport = createInProcessTransport((router) =>
      router.service(AgentService, {
        async getAgent(_request, context) {
          handlerAborted = aborted(context.signal);
          await sleep(1000);
          return {};
        },
      }),
    );
    const call = createClient(AgentService, transport).getAgent({}, { signal: controller.signal });
    await sleep(20);
    controller.abort();
    expect(((await call.catch((e) => e)) as ConnectError).code).toBe(Code.Canceled);
    await expect(handlerAborted).resolves.toBeDefined();
  });

  it("streams a reply, and stops the handler when the caller's signal aborts mid-stream", async () => {
    let stopped: Promise<unknown> | undefined;
    let produced = 0;
    const transport = createInProcessTransport((router) =>
      router.service(ConversationService, {
        async *streamMessage(request, context) {
          stopped = aborted(context.signal);
          for (let i = 0; i < 100 && !context.signal.aborted; i++) {
            produced += 1;
            yield { event: { case: "delta", value: { text: `${request.text} ${i}` } } };
            await sleep(5);
          }
        },
      }),
    );
    const caller = new AbortController();
    const received: string[] = [];
    const reading = (async () => {
      for await (const message of createClient(ConversationService, transport).streamMessage(
        { text: "part" },
        { signal: caller.signal },
      )) {
        if (message.event.case === "delta") received.push(message.event.value.text);
        if (received.length === 2) caller.abort();
      }
    })();
    expect(((await reading.catch((e) => e)) as ConnectError).code).toBe(Code.Canceled);
    expect(received).toEqual(["part 0", "part 1"]);
    await expect(stopped).resolves.toBeDefined();
    await sleep(30);
    expect(produced).toBeLessThan(5);
  });

  it("keeps a streamed reply's steps in the caller's request scope", async () => {
    const { currentRequestId } = await import("@agentry/logging");
    const seen: (string | undefined)[] = [];
    const transport = createInProcessTransport(
      (router) =>
        router.service(ConversationService, {
          async *streamMessage() {
            for (let i = 0; i < 2; i++) {
              await sleep(2);
              seen.push(currentRequestId());
              yield { event: { case: "delta", value: { text: String(i) } } };
            }
          },
        }),
      { serverInterceptors: [requestScopeInterceptor] },
    );
    const stream = createClient(ConversationService, transport).streamMessage(
      {},
      { headers: { "x-request-id": "req_scoped_stream" } },
    );
    for await (const _ of stream) {
    }
    expect(seen).toEqual(["req_scoped_stream", "req_scoped_stream"]);
  });

  it("refuses a method no service implements", async () => {
    const transport = createInProcessTransport(() => {});
    const error = await createClient(AgentService, transport)
      .getAgent({})
      .catch((e) => e);
    expect((error as ConnectError).code).toBe(Code.Unimplemented);
  });
});
