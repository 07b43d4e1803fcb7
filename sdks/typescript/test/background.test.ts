import { describe, expect, it } from "vitest";
import { AgentryError, APITimeoutError, APIUserAbortError } from "../src/index.js";
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

  it("waits while pending, pausing twice as long each time, and answers the first state that is not", async () => {
    const pending = { id: MESSAGE_ID, agentId: AGENT_ID, userId: null, roomId: null, status: "pending" };
    const failed = { ...pending, status: "failed", error: { code: "MODEL_ERROR", message: "no" } };
    const times: number[] = [];
    const answer = (data: unknown) => () => {
      times.push(Date.now());
      return json(200, { success: true, data });
    };
    const { fetch, requests } = mockFetch(answer(pending), answer(pending), answer(failed));
    const message = await clientWith(fetch).agents.messages.waitForBackground(AGENT_ID, MESSAGE_ID, {
      pollInterval: 40,
    });
    expect(message).toEqual(failed);
    expect(requests).toHaveLength(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(35);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(75);
  });

  it("gives up with APITimeoutError after maxWait, and stops when its signal aborts", async () => {
    const pending = { id: MESSAGE_ID, agentId: AGENT_ID, userId: null, roomId: null, status: "pending" };
    const always = () => json(200, { success: true, data: pending });
    const { fetch } = mockFetch(...Array.from({ length: 50 }, () => always));
    const messages = clientWith(fetch).agents.messages;
    await expect(
      messages.waitForBackground(AGENT_ID, MESSAGE_ID, { pollInterval: 10, maxWait: 60 }),
    ).rejects.toBeInstanceOf(APITimeoutError);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    await expect(
      messages.waitForBackground(AGENT_ID, MESSAGE_ID, { pollInterval: 1_000, signal: controller.signal }),
    ).rejects.toBeInstanceOf(APIUserAbortError);
    await expect(
      messages.waitForBackground(AGENT_ID, MESSAGE_ID, { pollInterval: 0 }),
    ).rejects.toBeInstanceOf(AgentryError);
  });
});
