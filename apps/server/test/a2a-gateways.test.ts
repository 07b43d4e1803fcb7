import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Message, Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { TaskNotCancelableError, TaskNotFoundError } from "@a2a-js/sdk/errors";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { generateApiKey, SCOPES } from "@agentry/core";
import { startTestRedis, type TestRedis } from "@agentry/limits/testing";
import { openRegistryStore } from "@agentry/registry";
import { type DeployableProcess as ServiceProcess, startDeployable } from "@agentry/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Gateway processes sharing one Redis and one data directory, as behind a load balancer: an A2A task sent
 * through one is read and cancelled through another, and outlives the gateway that ran it.
 */
const PUBLIC_BASE_URL = "https://agents.example.test";
let dataDir: string;
let redis: TestRedis;
let openai: FakeProviderServer<OpenAIChatBody>;
const gateways: ServiceProcess[] = [];
let a: ServiceProcess;
let b: ServiceProcess;

async function startGateway(): Promise<ServiceProcess> {
  const gateway = await startDeployable("apps/server", {
    DATA_DIR: dataDir,
    PORT: "0",
    REDIS_URL: redis.url,
    PUBLIC_BASE_URL,
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "k",
    DEFAULT_MODEL_PROVIDER: "openai",
  });
  gateways.push(gateway);
  // Listening comes before the limiter's Redis and the embedded services answer: wait until it says ready.
  for (const started = Date.now(); Date.now() - started < 20_000; ) {
    if ((await fetch(`${gateway.url}/readyz`)).status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return gateway;
}

let tenants = 0;
async function tenant(): Promise<string> {
  const store = await openRegistryStore({ dataDir });
  try {
    tenants += 1;
    const account = await store.createAccount({
      name: `a2a-${tenants}`,
      tier: "enterprise",
      limitOverrides: {},
    });
    const generated = generateApiKey();
    await store.createApiKey({
      accountId: account.id,
      name: "test",
      scopes: [...SCOPES],
      expiresAt: null,
      sha256: generated.sha256,
      prefix: generated.prefix,
    });
    return generated.secret;
  } finally {
    await store.close();
  }
}

async function newAgent(gateway: ServiceProcess, key: string): Promise<string> {
  const res = await fetch(`${gateway.url}/v1/agents`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "Ada", modelProvider: "openai", model: "gpt-4o-mini" }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { id: string } }).data.id;
}

/** The official A2A client of one gateway: the card's public address is reached at that gateway's own. */
async function clientFor(gateway: ServiceProcess, agentId: string, key: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const url = String(input instanceof Request ? input.url : input).replace(PUBLIC_BASE_URL, gateway.url);
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${key}`);
    return fetch(url, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  );
  return factory.createFromUrl(`${PUBLIC_BASE_URL}/v1/a2a/${agentId}/`);
}

const userMessage = (text: string, contextId: string): Message => ({
  messageId: crypto.randomUUID(),
  contextId,
  taskId: "",
  role: Role.ROLE_USER,
  parts: [
    { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" },
  ],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const replyText = (task: Task) =>
  task.artifacts
    .flatMap((artifact) => artifact.parts)
    .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
    .join("");

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-a2a-"));
  redis = await startTestRedis();
  openai = await startFakeOpenAI();
  [a, b] = await Promise.all([startGateway(), startGateway()]);
}, 60_000);

afterAll(async () => {
  for (const gateway of gateways) await gateway.stop("SIGKILL");
  await openai?.close();
  await redis?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("A2A tasks across gateways sharing Redis", () => {
  it("reads and lists a task through another gateway and after a restart, never through another account", async () => {
    const key = await tenant();
    const agentId = await newAgent(a, key);
    openai.reply("Seven.");
    const task = (await (
      await clientFor(a, agentId, key)
    ).sendMessage({
      tenant: "",
      message: userMessage("How many?", "ctx-1"),
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    const got = await (await clientFor(b, agentId, key)).getTask({ tenant: "", id: task.id });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got.contextId).toBe("ctx-1");
    expect(replyText(got)).toBe("Seven.");
    const listed = await (await clientFor(b, agentId, key)).listTasks({
      tenant: "",
      contextId: "ctx-1",
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    expect(listed.tasks.map((listedTask) => [listedTask.id, replyText(listedTask)])).toEqual([
      [task.id, "Seven."],
    ]);
    // An ended task cannot be cancelled, from any gateway.
    await expect(
      (await clientFor(b, agentId, key)).cancelTask({ tenant: "", id: task.id, metadata: undefined }),
    ).rejects.toBeInstanceOf(TaskNotCancelableError);

    // Another account's agent of its own does not see the task, by the same id.
    const other = await tenant();
    const otherAgent = await newAgent(b, other);
    await expect(
      (await clientFor(b, otherAgent, other)).getTask({ tenant: "", id: task.id }),
    ).rejects.toBeInstanceOf(TaskNotFoundError);

    // The gateway that ran it goes away; one started after it still answers.
    await a.stop("SIGKILL");
    a = await startGateway();
    const again = await (await clientFor(a, agentId, key)).getTask({ tenant: "", id: task.id });
    expect(replyText(again)).toBe("Seven.");
  }, 60_000);

  it("cancels through one gateway a task running on another: its model call stops, nothing is kept", async () => {
    const key = await tenant();
    const agentId = await newAgent(a, key);
    openai.reset();
    openai.reply("Too late.", { delayMs: 10_000 });
    const stream = (await clientFor(a, agentId, key)).sendMessageStream({
      tenant: "",
      message: userMessage("Take your time", "ctx-cancel"),
      configuration: undefined,
      metadata: undefined,
    });
    const first = await stream.next();
    expect(first.value?.payload?.$case).toBe("task");
    const taskId = first.value!.payload!.$case === "task" ? first.value!.payload!.value.id : "";
    await openai.waitForRequests(1);

    const started = Date.now();
    const cancelled = await (await clientFor(b, agentId, key)).cancelTask({
      tenant: "",
      id: taskId,
      metadata: undefined,
    });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // The stream on the running gateway ends cancelled, well before the model would have answered.
    const rest: StreamResponse[] = [];
    for await (const event of stream) rest.push(event);
    expect(Date.now() - started).toBeLessThan(5_000);
    const last = rest.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" ? last.value.status?.state : undefined).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
    const got = await (await clientFor(a, agentId, key)).getTask({ tenant: "", id: taskId });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const history = (await (
      await fetch(`${b.url}/v1/agents/${agentId}/messages?roomId=ctx-cancel`, {
        headers: { authorization: `Bearer ${key}` },
      })
    ).json()) as { data: { role: string; text: string }[] };
    expect(history.data.filter((m) => m.role === "assistant")).toEqual([]);
  }, 60_000);
});
