// @vitest-environment happy-dom

import type { Agent, ClientStatus } from "@agentry/sdk";
import { describe, expect, it } from "vitest";
import { namesOfPattern } from "./agents-api";
import { readCookie, withQuery } from "./api";
import { bodyOf } from "./pages/agent-form";
import { adviceOf, pushUrlOf } from "./pages/platform-clients";
import { seriesOf } from "./pages/usage";

describe("the agent form's request body", () => {
  const draft = {
    name: "Ada",
    bio: ["Counts", " "],
    knowledge: [],
    goals: ["Help"],
    personality: [
      { key: "tone", value: "dry" },
      { key: "adjectives", value: '["curious", "precise"]' },
      { key: " ", value: "ignored" },
    ],
    clients: "[]",
    settings: "{}",
    plugins: "[]",
    modelProvider: "",
    model: "",
    status: "active" as const,
  };

  it("creates with every field, blank items dropped and unset model fields left out", () => {
    expect(bodyOf(draft, null)).toEqual({
      name: "Ada",
      bio: ["Counts"],
      knowledge: [],
      goals: ["Help"],
      personality: { tone: "dry", adjectives: ["curious", "precise"] },
      clients: [],
      settings: {},
      plugins: [],
    });
  });

  it("updates only what changed, null resetting the model to the default", () => {
    const original = { ...draft, modelProvider: "openai", model: "gpt-4o-mini" };
    expect(bodyOf({ ...original, name: "Ada L.", status: "inactive" }, original)).toEqual({
      name: "Ada L.",
      status: "inactive",
    });
    expect(bodyOf({ ...original, modelProvider: "", model: "" }, original)).toEqual({
      modelProvider: null,
      model: null,
    });
    expect(bodyOf(original, original)).toEqual({});
  });

  it("refuses a personality key given twice", () => {
    const twice = [
      { key: "tone", value: "dry" },
      { key: "tone ", value: "warm" },
    ];
    expect(() => bodyOf({ ...draft, personality: twice }, null)).toThrow('the key "tone" is given twice');
  });

  it("names a JSON field that does not parse", () => {
    expect(() => bodyOf({ ...draft, settings: "{oops" }, null)).toThrow("settings is not valid JSON.");
  });
});

describe("the usage chart's series", () => {
  const usage = {
    from: "2026-01-01T00:00:00Z",
    to: "2026-01-03T00:00:00Z",
    granularity: "day" as const,
    buckets: [
      {
        start: "2026-01-01T00:00:00Z",
        end: "2026-01-02T00:00:00Z",
        groups: [
          {
            agentId: "agt_a",
            messages: 2,
            errors: 0,
            inputTokens: 1,
            outputTokens: 1,
            totalTokens: 10,
            latencyMs: { p50: 5, p95: 9 },
            timeToFirstTokenMs: { p50: 2, p95: 3 },
            costUsd: 0,
          },
          {
            agentId: "agt_b",
            messages: 1,
            errors: 1,
            inputTokens: 1,
            outputTokens: 1,
            totalTokens: 4,
            latencyMs: { p50: 7, p95: 7 },
            timeToFirstTokenMs: { p50: 2, p95: 2 },
            costUsd: 0,
          },
        ],
      },
      { start: "2026-01-02T00:00:00Z", end: "2026-01-03T00:00:00Z", groups: [] },
    ],
    totals: {
      messages: 3,
      errors: 1,
      inputTokens: 2,
      outputTokens: 2,
      totalTokens: 14,
      latencyMs: { p50: 6, p95: 9 },
      timeToFirstTokenMs: { p50: 2, p95: 3 },
      costUsd: 0,
    },
  };

  it("has one series per group, zero where a bucket has no counts and a gap where it has no latency", () => {
    const messages = seriesOf(usage, "messages", "agentId", { agt_a: "Ada" });
    expect(messages.times).toEqual([
      Date.parse("2026-01-01T00:00:00Z") / 1000,
      Date.parse("2026-01-02T00:00:00Z") / 1000,
    ]);
    expect(messages.series).toEqual([
      { label: "Ada", values: [2, 0] },
      { label: "agt_b", values: [1, 0] },
    ]);
    expect(seriesOf(usage, "p95", "agentId", {}).series[0]).toEqual({ label: "agt_a", values: [9, null] });
  });
});

describe("helpers", () => {
  it("reads a cookie among others", () => {
    expect(readCookie("a=1; agentry_csrf=tok%3Den; b=2", "agentry_csrf")).toBe("tok=en");
    expect(readCookie("a=1", "agentry_csrf")).toBeUndefined();
  });

  it("leaves unset query values out", () => {
    expect(withQuery("/v1/agents", { page: 2, status: "", sortBy: undefined, order: "asc" })).toBe(
      "/v1/agents?page=2&order=asc",
    );
  });

  it("reads the model names of a deployment's pattern", () => {
    const space = "\\t\\n ";
    expect(namesOfPattern(`^[${space}]*(?:gpt-4o|gpt-4\\.1)[${space}]*$`)).toEqual(["gpt-4o", "gpt-4.1"]);
    expect(namesOfPattern("^.*$")).toEqual([]);
  });
});

describe("the platform clients panel", () => {
  const agent: Agent = {
    id: "agt_1",
    name: "Ada",
    bio: [],
    personality: {},
    knowledge: [],
    goals: [],
    clients: ["slack", { type: "telegram", mode: "webhook" }, { type: "discord" }],
    settings: {},
    modelProvider: null,
    model: null,
    plugins: [],
    status: "inactive",
    statusReason: null,
    createdAt: "2026-01-01T00:00:00Z",
    updatedAt: "2026-01-01T00:00:00Z",
    apiEndpoint: "https://agents.example.com/v1/agents/agt_1/messages",
  };
  const status = (type: string, state: ClientStatus["state"]): ClientStatus => ({
    type,
    state,
    connectedAt: null,
    lastEventAt: null,
    lastError: null,
  });

  it("gives the address a pushing platform calls on the public origin, and none to a polling one", () => {
    expect(pushUrlOf(agent, "slack")).toBe("https://agents.example.com/v1/connectors/slack/agt_1");
    expect(pushUrlOf(agent, "telegram")).toBe("https://agents.example.com/v1/connectors/telegram/agt_1");
    expect(pushUrlOf({ ...agent, clients: ["telegram"] }, "telegram")).toBeNull();
    expect(pushUrlOf(agent, "discord")).toBeNull();
  });

  it("says what to do: paste the missing secrets first, then activate the agent", () => {
    expect(adviceOf(status("slack", "stopped"), agent, ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"])).toBe(
      "Paste the SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET below to start it.",
    );
    expect(adviceOf(status("slack", "stopped"), agent, [])).toBe(
      "The agent is inactive: activate it to start the client.",
    );
    expect(adviceOf(status("slack", "connected"), { ...agent, status: "active" }, [])).toBeNull();
    expect(adviceOf(status("twitter", "inert"), agent, [])).toBe(
      "This server runs no twitter connector: the client is kept, but nothing answers on twitter.",
    );
  });
});
