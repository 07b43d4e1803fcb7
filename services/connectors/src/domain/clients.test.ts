import { describe, expect, it } from "vitest";
import { answers, clientTypes, runClients } from "./clients.js";

describe("runClients", () => {
  it("reads names and objects, defaults respondIn to mentions and mode to polling, leaves others out", () => {
    expect(
      runClients(["telegram", { type: "discord", respondIn: "all", allowedChats: [42] }, "twitter"]),
    ).toEqual([
      { type: "telegram", respondIn: "mentions", allowedChats: undefined, mode: "polling" },
      { type: "discord", respondIn: "all", allowedChats: ["42"], mode: "polling" },
    ]);
    expect(clientTypes(["telegram", { type: "twitter" }])).toEqual(["telegram", "twitter"]);
    expect(runClients(null)).toEqual([]);
  });
});

describe("answers", () => {
  const [config] = runClients(["telegram"]);
  const group = { direct: false, addressed: false, fromBot: false, chatId: "-100" };

  it("answers private chats and, in groups, only when addressed", () => {
    expect(answers(config!, { ...group, direct: true })).toBe(true);
    expect(answers(config!, group)).toBe(false);
    expect(answers(config!, { ...group, addressed: true })).toBe(true);
  });

  it("never answers bots, and keeps to allowedChats", () => {
    expect(answers(config!, { ...group, direct: true, fromBot: true })).toBe(false);
    const [only] = runClients([{ type: "telegram", respondIn: "all", allowedChats: ["7"] }]);
    expect(answers(only!, group)).toBe(false);
    expect(answers(only!, { ...group, chatId: "7" })).toBe(true);
  });

  it("answers only private chats under direct", () => {
    const [direct] = runClients([{ type: "telegram", respondIn: "direct" }]);
    expect(answers(direct!, { ...group, addressed: true })).toBe(false);
  });
});
