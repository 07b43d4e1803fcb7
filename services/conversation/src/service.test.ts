import { MESSAGE_BOUNDS } from "@agentry/core";
import { AgentSchema } from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { conversationKey } from "./service.js";

const MAX_TEXT_CHARS = MESSAGE_BOUNDS.textMaxLength;

describe("conversationKey", () => {
  const agent = create(AgentSchema, { id: "agt_1", accountId: "acct_1" });
  const check = (text: string) => () => conversationKey({ accountId: "acct_1", agent, text });

  it("counts the text in characters (code points), not UTF-16 units", () => {
    // Each emoji is two UTF-16 units: twice the limit in units, exactly the limit in characters.
    expect(check("😀".repeat(MAX_TEXT_CHARS))).not.toThrow();
    expect(check("é".repeat(MAX_TEXT_CHARS))).not.toThrow();
    for (const text of ["", "x".repeat(MAX_TEXT_CHARS + 1), `${"😀".repeat(MAX_TEXT_CHARS)}x`]) {
      expect(check(text)).toThrow(expect.objectContaining({ code: "INVALID_REQUEST" }));
    }
  });

  it("is the conversation of the account, agent, user and room, the defaults empty", () => {
    expect(check("hi")()).toEqual({ accountId: "acct_1", agentId: "agt_1", userId: "", roomId: "" });
  });
});
