import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "@agentry/config";
import { silentLogger } from "@agentry/logging";
import { ConversationService } from "@agentry/proto";
import { createRpcServer, type RpcServer } from "@agentry/rpc";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConversation, type Conversation, loadConversationConfig } from "../src/index.js";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "../src/testing/index.js";
import { ACCOUNT, agent } from "./harness.js";

describe("standalone server", () => {
  let fake: FakeProviderServer<OpenAIChatBody>;
  let conversation: Conversation;
  let server: RpcServer;
  let baseUrl: string;
  const dataDir = mkdtempSync(join(tmpdir(), "conversation-server-"));

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    conversation = await buildConversation({
      dataDir,
      logger: silentLogger(),
      providers: { openai: { apiKey: "sk-any", baseURL: fake.baseURL } },
    });
    server = createRpcServer({
      routes: conversation.routes,
      logger: silentLogger(),
      dependencies: { database: conversation.ready },
    });
    baseUrl = `http://127.0.0.1:${(await server.listen(0, "127.0.0.1")).port}`;
  });
  afterAll(async () => {
    await server.shutdown();
    await conversation.close();
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers RPCs over h2c, as the gateway calls it", async () => {
    const client = createClient(ConversationService, createConnectTransport({ baseUrl, httpVersion: "2" }));
    const { reply } = await client.sendMessage({ accountId: ACCOUNT, agent: agent(), text: "over the wire" });
    expect(reply?.text).toBe("Echo: over the wire");
  });

  it("reports its database in /readyz", async () => {
    expect(await get(baseUrl, "/readyz")).toEqual([
      200,
      JSON.stringify({ status: "ready", dependencies: { database: "up" } }),
    ]);
  });
});

describe("loadConversationConfig", () => {
  it("reads the embeddings provider, its address and key defaulting to OpenAI's, and none when unset", () => {
    expect(loadConversationConfig({}).embeddings).toBeUndefined();
    expect(
      loadConversationConfig({
        EMBEDDINGS_PROVIDER: "openai",
        OPENAI_BASE_URL: "http://localhost:11434/v1",
        OPENAI_API_KEY: "sk-x",
      }).embeddings,
    ).toEqual({
      provider: "openai",
      model: "text-embedding-3-small",
      baseURL: "http://localhost:11434/v1",
      apiKey: "sk-x",
      timeoutMs: 5_000,
    });
    expect(
      loadConversationConfig({
        EMBEDDINGS_PROVIDER: "openai",
        EMBEDDINGS_BASE_URL: "http://127.0.0.1:8080/v1",
        EMBEDDINGS_API_KEY: "sk-e",
        EMBEDDINGS_MODEL: "nomic-embed-text",
        EMBEDDINGS_DIMENSIONS: "256",
        EMBEDDINGS_TIMEOUT_MS: "900",
        OPENAI_API_KEY: "sk-x",
      }).embeddings,
    ).toEqual({
      provider: "openai",
      model: "nomic-embed-text",
      baseURL: "http://127.0.0.1:8080/v1",
      apiKey: "sk-e",
      dimensions: 256,
      timeoutMs: 900,
    });
    expect(() => loadConversationConfig({ EMBEDDINGS_PROVIDER: "cohere" })).toThrow(/EMBEDDINGS_PROVIDER/);
    expect(() => loadConversationConfig({ EMBEDDINGS_BASE_URL: "nope" })).toThrow(/EMBEDDINGS_BASE_URL/);
  });

  it("applies the documented defaults", () => {
    const config = loadConversationConfig({});
    expect(config).toMatchObject({
      port: 8082,
      contextTokenBudget: 3000,
      providers: {
        openai: { model: "gpt-4o-mini" },
        anthropic: { model: "claude-haiku-5-5" },
        timeoutMs: 60_000,
        firstTokenTimeoutMs: 20_000,
        local: { replyTimeoutMs: 20_000, maxTokens: 128 },
      },
    });
    expect(config.dataDir).toMatch(/data$/);
    expect(config.providers.defaultProvider).toBeUndefined();
    expect(config.providers.openai?.apiKey).toBeUndefined();
  });

  it("reads the provider variables, treating empty ones as unset", () => {
    const config = loadConversationConfig({
      DEFAULT_MODEL_PROVIDER: "anthropic",
      OPENAI_API_KEY: "",
      OPENAI_BASE_URL: "http://localhost:11434/v1",
      ANTHROPIC_API_KEY: "sk-ant-x",
      ANTHROPIC_MODEL: "claude-haiku-5-5",
      PROVIDER_TIMEOUT_MS: "30000",
      CONTEXT_TOKEN_BUDGET: "500",
      CONVERSATION_PORT: "9000",
    });
    expect(config.port).toBe(9000);
    expect(config.contextTokenBudget).toBe(500);
    expect(config.providers).toMatchObject({
      defaultProvider: "anthropic",
      openai: { baseURL: "http://localhost:11434/v1" },
      anthropic: { apiKey: "sk-ant-x", model: "claude-haiku-5-5" },
      timeoutMs: 30_000,
    });
    expect(config.providers.openai?.apiKey).toBeUndefined();
  });

  it("stops on a bad value with one line naming the variable", () => {
    expect(() => loadConversationConfig({ DEFAULT_MODEL_PROVIDER: "cohere" })).toThrow(ConfigError);
    expect(() => loadConversationConfig({ OPENAI_BASE_URL: "not a url" })).toThrow(/OPENAI_BASE_URL/);
    expect(() => loadConversationConfig({ PROVIDER_TIMEOUT_MS: "0" })).toThrow(/PROVIDER_TIMEOUT_MS/);
  });

  it("reads the local model's reply bounds, and refuses them out of range", () => {
    const config = loadConversationConfig({ LOCAL_REPLY_TIMEOUT_MS: "8000", LOCAL_MAX_TOKENS: "64" });
    expect(config.providers.local).toMatchObject({ replyTimeoutMs: 8000, maxTokens: 64 });
    expect(() => loadConversationConfig({ LOCAL_REPLY_TIMEOUT_MS: "0" })).toThrow(/LOCAL_REPLY_TIMEOUT_MS/);
    expect(() => loadConversationConfig({ LOCAL_MAX_TOKENS: "0" })).toThrow(/LOCAL_MAX_TOKENS/);
    expect(() => loadConversationConfig({ LOCAL_MAX_TOKENS: "8193" })).toThrow(/LOCAL_MAX_TOKENS/);
  });
});

function get(baseUrl: string, path: string): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.on("error", reject);
    const req = session.request({ ":method": "GET", ":path": path });
    let status = 0;
    let body = "";
    req.on("response", (headers) => {
      status = Number(headers[":status"]);
    });
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      session.close();
      resolve([status, body]);
    });
    req.on("error", reject);
    req.end();
  });
}
