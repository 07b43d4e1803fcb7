import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AppError, fromConnectError } from "@agentry/errors";
import { silentLogger } from "@agentry/logging";
import type { PublishEvents } from "@agentry/outbox";
import { type Agent, AgentSchema, type AgentSpecSchema, ConversationService } from "@agentry/proto";
import { servedInterceptors } from "@agentry/rpc";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { type Client, createClient, createRouterTransport } from "@connectrpc/connect";
import {
  type BuildConversationOptions,
  buildConversation,
  type Conversation,
  type ConversationStore,
  type PluginRuntime,
  type ProvidersConfig,
} from "../src/index.js";
import {
  type AnthropicMessagesBody,
  type FakeProviderServer,
  type OpenAIChatBody,
  startFakeAnthropic,
  startFakeOpenAI,
} from "../src/testing/index.js";

export const OPENAI_KEY = "sk-test-openai-0123456789";
export const ANTHROPIC_KEY = "sk-ant-test-0123456789";
export const ACCOUNT = "acct_01JTEST0000000000000000000";

export interface Harness {
  openai: FakeProviderServer<OpenAIChatBody>;
  anthropic: FakeProviderServer<AnthropicMessagesBody>;
  conversation: Conversation;
  client: Client<typeof ConversationService>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Replaces the default configuration (both fakes, openai the default provider). */
  providers?: (fakes: { openai: string; anthropic: string }) => ProvidersConfig;
  contextTokenBudget?: number;
  /** Where message events are published; without it, sends write none. */
  publish?: PublishEvents;
  /** The directory of the SQLite file; a fresh one, removed at close, when unset. */
  dataDir?: string;
  /** The plugins agents' turns may use; none when unset. */
  plugins?: PluginRuntime;
  /** A store to use instead of the SQLite file (closed with the service). */
  store?: ConversationStore;
  /** STREAM_RETENTION in milliseconds; the service's default when unset. */
  streamRetentionMs?: number;
  /** Background messages' leases; the service's defaults when unset. */
  runLeases?: BuildConversationOptions["runLeases"];
  /** The embeddings provider memories are recalled by besides full text; none when unset. */
  embeddings?: BuildConversationOptions["embeddings"];
  /** Where schedules read their agent at fire time; without it nothing fires. */
  agents?: BuildConversationOptions["agents"];
  /** SCHEDULE_SCAN_MS; the service's default when unset. */
  scheduleScanMs?: number;
  /** TOOL_APPROVAL_TIMEOUT in milliseconds; the service's default when unset. */
  approvalTimeoutMs?: number;
}

/** Both fake providers, the service on a fresh SQLite file, and a client over the in-process transport. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const openai = await startFakeOpenAI({ apiKey: OPENAI_KEY });
  const anthropic = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "conversation-test-"));
  const urls = { openai: openai.baseURL, anthropic: anthropic.baseURL };
  const providers = options.providers?.(urls) ?? {
    defaultProvider: "openai",
    openai: { apiKey: OPENAI_KEY, baseURL: urls.openai },
    anthropic: { apiKey: ANTHROPIC_KEY, baseURL: urls.anthropic },
    timeoutMs: 5_000,
    firstTokenTimeoutMs: 5_000,
  };
  const conversation = await buildConversation({
    dataDir,
    logger: silentLogger(),
    providers,
    ...(options.contextTokenBudget === undefined ? {} : { contextTokenBudget: options.contextTokenBudget }),
    ...(options.publish ? { webhooks: { publish: options.publish }, outboxIntervalMs: 20 } : {}),
    ...(options.plugins ? { plugins: options.plugins } : {}),
    ...(options.store ? { store: options.store } : {}),
    ...(options.streamRetentionMs === undefined ? {} : { streamRetentionMs: options.streamRetentionMs }),
    ...(options.runLeases ? { runLeases: options.runLeases } : {}),
    ...(options.embeddings ? { embeddings: options.embeddings } : {}),
    ...(options.agents ? { agents: options.agents } : {}),
    ...(options.scheduleScanMs === undefined ? {} : { scheduleScanMs: options.scheduleScanMs }),
    ...(options.approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs: options.approvalTimeoutMs }),
  });
  const client = createClient(
    ConversationService,
    createRouterTransport(conversation.routes, {
      router: { interceptors: servedInterceptors(silentLogger()) },
    }),
  );
  return {
    openai,
    anthropic,
    conversation,
    client,
    async close() {
      await conversation.close();
      await Promise.all([openai.close(), anthropic.close()]);
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let agents = 0;

/** An agent record as the registry would pass it, with a fresh id. */
export function agent(
  spec: Omit<MessageInitShape<typeof AgentSpecSchema>, "$typeName" | "plugins"> & {
    plugins?: JsonValue[];
  } = {},
  id?: string,
): Agent {
  agents += 1;
  const { plugins, ...rest } = spec;
  return create(AgentSchema, {
    id: id ?? `agt_01JTESTAGENT${String(agents).padStart(14, "0")}`,
    accountId: ACCOUNT,
    spec: { name: "Ada", ...rest, ...(plugins ? { plugins: fromJson(ValueSchema, plugins) } : {}) },
  });
}

/** The public error an RPC failed with, as the gateway recovers it; fails the test when the RPC succeeded. */
export async function failure(call: Promise<unknown> | (() => Promise<unknown>)): Promise<AppError> {
  try {
    await (typeof call === "function" ? call() : call);
  } catch (error) {
    return fromConnectError(error);
  }
  throw new Error("expected the call to fail");
}
