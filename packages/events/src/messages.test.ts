import { describe, expect, it } from "vitest";
import { messageCompletedData, messageFailedData, presentReply, type ReplyView } from "./messages.js";

const reply: ReplyView & { accountId: string; conversationId: string } = {
  id: "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  agentId: "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  accountId: "acct_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  conversationId: "conv_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  userId: "user-42",
  roomId: null,
  text: "Hello!",
  model: "gpt-4o-mini",
  modelProvider: "openai",
  finishReason: "stop",
  usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 },
  latencyMs: 812,
  createdAt: "2026-01-01T00:00:00.000Z",
};

describe("presentReply", () => {
  it("is the reply object of the API, its fields in the contract's order and nothing else", () => {
    const json = presentReply(reply);
    expect(Object.keys(json)).toEqual([
      "id",
      "agentId",
      "userId",
      "roomId",
      "text",
      "model",
      "modelProvider",
      "finishReason",
      "usage",
      "latencyMs",
      "createdAt",
    ]);
    expect(json).not.toHaveProperty("accountId");
    expect(json).not.toHaveProperty("conversationId");
    expect(json.usage).toEqual({ inputTokens: 12, outputTokens: 3, totalTokens: 15 });
    expect(json.usage).not.toBe(reply.usage);
  });

  it("adds toolCalls only when the model called tools, arguments and outputs as JSON values", () => {
    expect(presentReply({ ...reply, toolCalls: [] })).not.toHaveProperty("toolCalls");
    const json = presentReply({
      ...reply,
      toolCalls: [
        { id: "c1", name: "time__now", arguments: '{"zone":"UTC"}', ok: true, output: '{"time":"12:00"}' },
        {
          id: "c2",
          name: "calc__eval",
          arguments: '{"x": ',
          ok: false,
          error: "The arguments are not valid JSON.",
        },
      ],
    });
    expect(Object.keys(json).at(-1)).toBe("toolCalls");
    expect(json.toolCalls).toEqual([
      { id: "c1", name: "time__now", arguments: { zone: "UTC" }, ok: true, output: { time: "12:00" } },
      {
        id: "c2",
        name: "calc__eval",
        arguments: '{"x": ',
        ok: false,
        error: "The arguments are not valid JSON.",
      },
    ]);
  });

  it("is the data of message.completed, byte for byte", () => {
    expect(JSON.stringify(messageCompletedData(reply))).toBe(JSON.stringify(presentReply(reply)));
  });
});

describe("messageFailedData", () => {
  it("is {agentId, messageId, code, message} and nothing else", () => {
    const data = messageFailedData({
      code: "MODEL_ERROR",
      message: "The model provider rejected the credentials.",
      agentId: reply.agentId,
      messageId: reply.id,
      ...{ stack: "never" },
    });
    expect(JSON.stringify(data)).toBe(
      JSON.stringify({
        agentId: reply.agentId,
        messageId: reply.id,
        code: "MODEL_ERROR",
        message: "The model provider rejected the credentials.",
      }),
    );
  });
});
