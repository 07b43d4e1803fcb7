import { describe, expect, it } from "vitest";
import { agentCreated, agentDeleted, agentStatusChanged, agentUpdated } from "./events.js";
import { newAgent } from "./status.js";
import type { AgentRecord } from "./types.js";

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

describe("outbox events", () => {
  it("agent.created carries the whole record, as JSON", () => {
    const events = agentCreated(created);
    expect(events).toEqual([
      { type: "agent.created", accountId: "acct_1", agentId: created.id, payload: { agent: { ...created } } },
    ]);
    // The payload is JSON through and through: what the outbox stores is what consumers read.
    expect(JSON.parse(JSON.stringify(events[0]!.payload))).toEqual(events[0]!.payload);
  });

  it("an update is agent.updated with the record after it, and agent.status_changed when the status changed", () => {
    const renamed = { ...created, name: "Ada L." };
    expect(agentUpdated(created, renamed)).toEqual([
      { type: "agent.updated", accountId: "acct_1", agentId: created.id, payload: { agent: renamed } },
    ]);
    const switchedOff: AgentRecord = { ...created, status: "inactive" };
    expect(agentUpdated(created, switchedOff).map((e) => e.type)).toEqual([
      "agent.updated",
      "agent.status_changed",
    ]);
    expect(
      agentUpdated(failed, { ...failed, model: "other", status: "active", statusReason: null })[1],
    ).toEqual({
      type: "agent.status_changed",
      accountId: "acct_1",
      agentId: created.id,
      payload: { accountId: "acct_1", agentId: created.id, from: "error", to: "active", statusReason: null },
    });
  });

  it("never carries the agent's write-only secrets", () => {
    const withSecrets = { ...created, settings: { temperature: 0.4, secrets: { API_KEY: "sk-1" } } };
    const [event] = agentCreated(withSecrets);
    expect(event!.payload).toEqual({ agent: { ...created } });
    expect(JSON.stringify(agentUpdated(created, withSecrets))).not.toContain("sk-1");
  });

  it("a health report is agent.status_changed with the new reason, and nothing when the status stayed", () => {
    expect(agentStatusChanged(created, failed)).toEqual([
      {
        type: "agent.status_changed",
        accountId: "acct_1",
        agentId: created.id,
        payload: {
          accountId: "acct_1",
          agentId: created.id,
          from: "active",
          to: "error",
          statusReason: failed.statusReason,
        },
      },
    ]);
    const newReason = { ...failed, statusReason: { ...failed.statusReason!, message: "rejected again" } };
    expect(agentStatusChanged(failed, newReason)).toEqual([]);
  });

  it("agent.deleted names only the agent and its account", () => {
    expect(agentDeleted("acct_1", "agt_1")).toEqual([
      {
        type: "agent.deleted",
        accountId: "acct_1",
        agentId: "agt_1",
        payload: { accountId: "acct_1", agentId: "agt_1" },
      },
    ]);
  });

  it("payloads are copies: changing the record afterwards changes no event", () => {
    const record: AgentRecord = { ...failed, statusReason: { ...failed.statusReason! } };
    const [updated, changed] = agentUpdated(created, record);
    record.statusReason!.message = "changed later";
    const agent = updated!.payload.agent as { statusReason: { message: string } };
    expect(agent.statusReason.message).toBe("rejected");
    expect((changed!.payload.statusReason as { message: string }).message).toBe("rejected");
  });
});
