import { describe, expect, it } from "vitest";
import { AgentryError } from "../src/index.js";
import { AGENT_ID, clientWith, json, mockFetch, reply } from "./helpers.js";

const MESSAGE_ID = "msg_01JAAAAAAAAAAAAAAAAAAAAAAA";

describe("background messages", () => {
  it("sends with background: true and an Idempotency-Key, and answers the accepted id", async () => {
    const { fetch, requests } = mockFetch(() =>
      json(202, { success: true, data: { id: MESSAGE_ID, status: "pending" } }),
    );
    const accepted = await clientWith(fetch).agents.messages.sendBackground(AGENT_ID, {
      text: "work",
      userId: "u1",
    });
    expect(accepted).toEqual({ id: MESSAGE_ID, status: "pending" });
    expect(requests[0]!.method).toBe("POST");
    expect(requests[0]!.url.pathname).toBe(`/v1/agents/${AGENT_ID}/messages`);
    expect(requests[0]!.body).toEqual({ text: "work", userId: "u1", background: true });
    expect(requests[0]!.headers.get("idempotency-key")).toMatch(/.+/);
  });

  it("reads a background message in each state, and refuses a stored message without state", async () => {
    const pending = { id: MESSAGE_ID, agentId: AGENT_ID, userId: null, roomId: null, status: "pending" };
    const completed = { ...reply(), status: "completed" };
    const failed = { ...pending, status: "failed", error: { code: "MODEL_ERROR", message: "no" } };
    const stored = { ...reply(), conversationId: "conv_1", role: "assistant" };
    const { fetch, requests } = mockFetch(
      () => json(200, { success: true, data: pending }),
      () => json(200, { success: true, data: completed }),
      () => json(200, { success: true, data: failed }),
      () => json(200, { success: true, data: stored }),
    );
    const messages = clientWith(fetch).agents.messages;
    expect(await messages.getBackground(AGENT_ID, MESSAGE_ID)).toEqual(pending);
    const done = await messages.getBackground(AGENT_ID, MESSAGE_ID);
    expect(done.status === "completed" && done.text).toBe("Hello there.");
    expect(await messages.getBackground(AGENT_ID, MESSAGE_ID)).toEqual(failed);
    await expect(messages.getBackground(AGENT_ID, MESSAGE_ID)).rejects.toBeInstanceOf(AgentryError);
    expect(requests[0]!.url.pathname).toBe(`/v1/agents/${AGENT_ID}/messages/${MESSAGE_ID}`);
  });
});
