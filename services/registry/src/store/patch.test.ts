import { describe, expect, it } from "vitest";
import { applyAgentPatch } from "./patch.js";
import { newAgent } from "./status.js";

const stored = newAgent(
  "acct_1",
  {
    name: "Ada",
    bio: [],
    personality: {},
    knowledge: [],
    goals: [],
    clients: [],
    settings: { temperature: 0.4, secrets: { API_KEY: "sk-1" } },
    modelProvider: null,
    model: null,
    plugins: [],
  },
  "2026-01-01T00:00:00.000Z",
);
const later = "2026-01-02T00:00:00.000Z";

describe("applyAgentPatch and the write-only secrets", () => {
  it("keeps the stored secrets when the new settings leave them out, as settings read back always do", () => {
    const next = applyAgentPatch(stored, { settings: { temperature: 1 } }, later);
    expect(next.settings).toEqual({ temperature: 1, secrets: { API_KEY: "sk-1" } });
  });

  it("replaces them when the new settings send them, and leaves them alone when settings are not sent", () => {
    expect(applyAgentPatch(stored, { settings: { secrets: {} } }, later).settings).toEqual({ secrets: {} });
    expect(applyAgentPatch(stored, { name: "Bo" }, later).settings).toEqual(stored.settings);
  });
});
