import { describe, expect, it } from "vitest";
import { isId, newId } from "./ids.js";
import { effectiveLimits, TIER_DEFAULTS } from "./plans.js";

describe("ids", () => {
  it("are prefixed, valid for their kind only, and sort by creation", () => {
    const ids = Array.from({ length: 1000 }, () => newId("agent"));
    for (const id of ids) {
      expect(id).toMatch(/^agt_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(isId("agent", id)).toBe(true);
      expect(isId("account", id)).toBe(false);
    }
    expect([...ids].sort()).toEqual(ids);
    expect(isId("agent", "agt_")).toBe(false);
    expect(isId("agent", "agt_01jaaaaaaaaaaaaaaaaaaaaaaa")).toBe(false);
    expect(newId("request")).toMatch(/^req_/);
  });
});

describe("plans", () => {
  it("have the decisions' defaults and apply overrides", () => {
    expect(TIER_DEFAULTS.standard).toEqual({
      requestsPerMinute: 60,
      createPerMinute: 10,
      listPerMinute: 60,
      getPerMinute: 60,
      updatePerMinute: 30,
      deletePerMinute: 10,
      messagesPerMinute: 60,
      concurrentMessages: 10,
      maxAgents: 100,
    });
    expect(TIER_DEFAULTS.pro.requestsPerMinute).toBe(300);
    expect(effectiveLimits("enterprise", { maxAgents: 5000 })).toMatchObject({
      maxAgents: 5000,
      requestsPerMinute: 300,
    });
  });
});
