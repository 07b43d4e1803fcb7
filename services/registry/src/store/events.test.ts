import { isId } from "@agentry/core";
import { describe, expect, it } from "vitest";
import { agentCreated, agentDeleted, agentStatusChanged, agentUpdated } from "./events.js";
import { applyAgentPatch } from "./patch.js";
import { applyHealthReport, newAgent } from "./status.js";
import type { AgentRecord, NewOutboxEvent } from "./types.js";

const created = newAgent(
  "acct_1",
  {
    name: "Ada",
    bio: ["Mathematician"],
    personality: { tone: "warm" },
    knowledge: ["analysis"],
    goals: ["teach"],
    clients: ["discord"],
    settings: { temperature: 0.4 },
    modelProvider: "openai",
    model: "gpt-4o-mini",
    plugins: [{ name: "search" }],
  },
  "2026-01-01T00:00:00.000Z",
);

const failed: AgentRecord = {
  ...created,
  status: "error",
  statusReason: { code: "MODEL_ERROR", message: "rejected", at: "2026-01-02T00:00:00.000Z" },
  updatedAt: "2026-01-02T00:00:00.000Z",
};

const types = (events: NewOutboxEvent[]) => events.map((e) => e.type);
const AT = "2026-01-03T00:00:00.000Z";

describe("outbox events", () => {
  it("agent.created carries the whole record, as JSON, under an event id of its own", () => {
    const events = agentCreated(created);
    expect(events).toEqual([
      {
        id: expect.any(String),
        type: "agent.created",
        accountId: "acct_1",
        agentId: created.id,
        payload: { agent: { ...created } },
      },
    ]);
    expect(isId("event", events[0]!.id)).toBe(true);
    expect(agentCreated(created)[0]!.id).not.toBe(events[0]!.id);
    // The payload is JSON through and through: what the outbox stores is what consumers read.
    expect(JSON.parse(JSON.stringify(events[0]!.payload))).toEqual(events[0]!.payload);
  });

  it("an update is agent.updated with the record after it, and agent.status_changed when the status changed", () => {
    const renamed = { ...created, name: "Ada L." };
    expect(agentUpdated(created, renamed)).toEqual([
      {
        id: expect.any(String),
        type: "agent.updated",
        accountId: "acct_1",
        agentId: created.id,
        payload: { agent: renamed },
      },
    ]);
    const switchedOff: AgentRecord = { ...created, status: "inactive" };
    expect(types(agentUpdated(created, switchedOff))).toEqual(["agent.updated", "agent.status_changed"]);
    const [updated, changed] = agentUpdated(failed, {
      ...failed,
      model: "other",
      status: "active",
      statusReason: null,
    });
    expect(changed).toMatchObject({
      type: "agent.status_changed",
      payload: { agent: { status: "active", statusReason: null, model: "other" } },
    });
    expect(changed!.id).not.toBe(updated!.id);
  });

  it("every PATCH is agent.updated, an empty one too; one that changes the status is agent.status_changed as well", () => {
    const patched = (before: AgentRecord, patch: Parameters<typeof applyAgentPatch>[1]) =>
      types(agentUpdated(before, applyAgentPatch(before, patch, AT)));
    expect(patched(created, {})).toEqual(["agent.updated"]);
    expect(patched(created, { name: "B" })).toEqual(["agent.updated"]);
    expect(patched(created, { status: "active" })).toEqual(["agent.updated"]);
    expect(patched(created, { status: "inactive" })).toEqual(["agent.updated", "agent.status_changed"]);
    // Out of error by a change of model, settings or status.
    expect(patched(failed, { model: "gpt-4o" })).toEqual(["agent.updated", "agent.status_changed"]);
    expect(patched(failed, { settings: {} })).toEqual(["agent.updated", "agent.status_changed"]);
    expect(patched(failed, { status: "inactive" })).toEqual(["agent.updated", "agent.status_changed"]);
    expect(patched(failed, { name: "still failing" })).toEqual(["agent.updated"]);
  });

  it("a health report is agent.status_changed alone, and nothing when the status stayed", () => {
    const reported = (before: AgentRecord, failure: AgentRecord["statusReason"]) => {
      const after = applyHealthReport(before, failure, AT);
      return after ? types(agentStatusChanged(before, after)) : [];
    };
    const reason = { code: "MODEL_ERROR", message: "rejected", at: AT };
    expect(reported(created, reason)).toEqual(["agent.status_changed"]);
    expect(reported(failed, null)).toEqual(["agent.status_changed"]);
    expect(reported(failed, { ...reason, message: "rejected again" })).toEqual([]);
    expect(reported(created, null)).toEqual([]);
    expect(reported({ ...created, status: "inactive" }, reason)).toEqual([]);
    expect(agentStatusChanged(created, failed)[0]!.payload).toEqual({ agent: { ...failed } });
  });

  it("agent.deleted names only the agent and its account", () => {
    expect(agentDeleted("acct_1", "agt_1")).toEqual([
      {
        id: expect.any(String),
        type: "agent.deleted",
        accountId: "acct_1",
        agentId: "agt_1",
        payload: { accountId: "acct_1", agentId: "agt_1" },
      },
    ]);
  });

  it("payloads keep no copy of settings.secrets", () => {
    const withSecrets = { ...created, settings: { temperature: 1, secrets: { OPENAI_API_KEY: "sk-live" } } };
    for (const event of [
      ...agentCreated(withSecrets),
      ...agentUpdated(created, { ...withSecrets, status: "inactive" }),
    ]) {
      expect(JSON.stringify(event.payload)).not.toContain("sk-live");
      expect((event.payload.agent as { settings: unknown }).settings).toEqual({ temperature: 1 });
    }
    expect(withSecrets.settings.secrets).toEqual({ OPENAI_API_KEY: "sk-live" });
  });

  it("payloads are copies: changing the record afterwards changes no event", () => {
    const record: AgentRecord = { ...failed, statusReason: { ...failed.statusReason! }, bio: ["one"] };
    const [updated] = agentUpdated(created, record);
    record.statusReason!.message = "changed later";
    record.bio.push("two");
    const agent = updated!.payload.agent as { statusReason: { message: string }; bio: string[] };
    expect(agent.statusReason.message).toBe("rejected");
    expect(agent.bio).toEqual(["one"]);
  });

  it("never carries the agent's write-only secrets", () => {
    const withSecrets = { ...created, settings: { temperature: 0.4, secrets: { API_KEY: "sk-1" } } };
    const [event] = agentCreated(withSecrets);
    expect(event!.payload).toEqual({ agent: { ...created, settings: { temperature: 0.4 } } });
    expect(JSON.stringify(agentUpdated(created, withSecrets))).not.toContain("sk-1");
  });
});
