import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness, type Tenant } from "./harness.js";
import {
  type Answer,
  expectError,
  type MessageJson,
  MISSING,
  ndjsonLines,
  newAgent,
  type Page,
  writeConversation,
} from "./history-helpers.js";

/** The history routes with the conversation service in a process of its own, called over HTTP/2. */
let dataDir: string;
let conversation: DeployableProcess;
let h: Harness;
let tenant: Tenant;
let agentId: string;
let ids: string[];

const MESSAGES = 1_234;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-history-split-"));
  conversation = await startDeployable("services/conversation", {
    DATA_DIR: dataDir,
    CONVERSATION_PORT: "0",
    // No message is sent; a provider is configured only because the service needs one to start.
    LOCAL_ENABLED: "false",
    OPENAI_API_KEY: "sk-unused",
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
  });
  h = await startHarness({ CONVERSATION_URL: conversation.url, RPC_TIMEOUT_MS: "2000" });
  tenant = await h.tenant();
  agentId = await newAgent(h, tenant.key);
  ids = await writeConversation(dataDir, {
    accountId: tenant.accountId,
    agentId,
    userId: "remote-user",
    count: MESSAGES,
    textChars: 300,
  });
}, 60_000);

afterAll(async () => {
  await h?.close();
  await conversation?.stop("SIGKILL");
  await rm(dataDir, { recursive: true, force: true });
});

describe("history with the conversation service in another process", () => {
  it("exports every message, page after page of the RPC stream, in order", async () => {
    const res = await fetch(`${h.url}/v1/users/remote-user/export`, {
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    expect(res.status).toBe(200);
    const lines = ndjsonLines(await res.text());
    expect(lines.map((m) => m.id)).toEqual(ids);
    expect(lines.every((m) => m.agentId === agentId && m.userId === "remote-user")).toBe(true);
  });

  it("pages, reads, deletes and erases, with the error codes kept across the boundary", async () => {
    const page = await h.request<Page<MessageJson>>(
      "GET",
      `/v1/agents/${agentId}/messages?order=asc&limit=100&after=${ids[99]}`,
      { key: tenant.key },
    );
    expect(page.body.data.map((m) => m.id)).toEqual(ids.slice(100, 200));
    expect(page.body.pagination).toEqual({ limit: 100, hasMore: true });
    const foreign = await h.request("GET", `/v1/agents/${agentId}/messages?before=${MISSING.message}`, {
      key: tenant.key,
    });
    expectError(foreign as Answer<object>, 400, "INVALID_REQUEST", "before");
    const missing = await h.request("GET", `/v1/agents/${agentId}/messages/${MISSING.message}`, {
      key: tenant.key,
    });
    expectError(missing as Answer<object>, 404, "MESSAGE_NOT_FOUND");
    const gone = await h.request("DELETE", `/v1/agents/${agentId}/conversations/${MISSING.conversation}`, {
      key: tenant.key,
    });
    expectError(gone as Answer<object>, 404, "CONVERSATION_NOT_FOUND");

    const erased = await h.request<{ data: { messagesDeleted: number } }>("DELETE", "/v1/users/remote-user", {
      key: tenant.key,
    });
    expect(erased.body.data.messagesDeleted).toBe(MESSAGES);
    const after = await fetch(`${h.url}/v1/users/remote-user/export`, {
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    expect(after.status).toBe(200);
    expect(await after.text()).toBe("");
  });
});
