import { describe, expect, it } from "vitest";
import { eventsIssues } from "./endpoint.js";
import { subscribes } from "./events.js";

describe("event matching", () => {
  it("matches the types listed, or every published type for *", () => {
    expect(subscribes(["agent.created"], "agent.created")).toBe(true);
    expect(subscribes(["agent.created"], "agent.updated")).toBe(false);
    expect(subscribes(["*"], "message.failed")).toBe(true);
  });

  it("never fans out webhook.test or an unknown type", () => {
    expect(subscribes(["*"], "webhook.test")).toBe(false);
    expect(subscribes(["*"], "agent.exploded")).toBe(false);
  });

  it("accepts known types without repeats, or * alone", () => {
    expect(eventsIssues(["agent.created", "message.completed"])).toEqual([]);
    expect(eventsIssues(["*"])).toEqual([]);
    expect(eventsIssues([]).map((i) => i.field)).toEqual(["events"]);
    expect(eventsIssues(["*", "agent.created"]).map((i) => i.field)).toEqual(["events"]);
    expect(eventsIssues(["agent.created", "webhook.test", "agent.created"]).map((i) => i.field)).toEqual([
      "events[1]",
      "events[2]",
    ]);
  });
});
