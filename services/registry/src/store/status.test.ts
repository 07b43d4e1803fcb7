import { isId } from "@agentry/core";
import { describe, expect, it } from "vitest";
import { applyHealthReport, newAgent } from "./status.js";
import type { AgentFields, AgentRecord, AgentStatus, StatusReason } from "./types.js";

const fields: AgentFields = {
  name: "Ada",
  bio: ["Mathematician"],
  personality: {},
  knowledge: [],
  goals: [],
  clients: [],
  settings: { temperature: 0.4 },
  modelProvider: "openai",
  model: "gpt-4o-mini",
  plugins: [],
};

const failure: StatusReason = {
  code: "MODEL_ERROR",
  message: "The provider rejected the credentials.",
  at: "2026-01-02T00:00:00.000Z",
};

function agent(status: AgentStatus): AgentRecord {
  return {
    ...newAgent("acct_1", fields, "2026-01-01T00:00:00.000Z"),
    status,
    statusReason: status === "error" ? { ...failure, message: "an earlier failure" } : null,
  };
}

const LATER = "2026-01-03T00:00:00.000Z";

describe("newAgent", () => {
  it("is active, without a reason, with an agent id and one time for creation and update", () => {
    const created = newAgent("acct_1", fields, "2026-01-01T00:00:00.000Z");
    expect(created).toEqual({
      ...fields,
      id: created.id,
      accountId: "acct_1",
      status: "active",
      statusReason: null,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
    });
    expect(isId("agent", created.id)).toBe(true);
    expect(newAgent("acct_1", fields, LATER).id).not.toBe(created.id);
  });
});

describe("applyHealthReport", () => {
  // A failure puts the agent in error with its reason (an agent already there takes the new one); a success
  // takes it out of error and clears the reason.
  it.each([
    { from: "active", report: failure, to: "error", kind: "failure" },
    { from: "error", report: failure, to: "error", kind: "failure" },
    { from: "error", report: null, to: "active", kind: "success" },
  ] as const)("takes an agent from $from to $to on a $kind", ({ from, report, to }) => {
    const before = agent(from);
    expect(applyHealthReport(before, report, LATER)).toEqual({
      ...before,
      status: to,
      statusReason: report,
      updatedAt: LATER,
    });
  });

  it("changes nothing for an inactive agent, failure or success, nor for a success of an active one", () => {
    expect(applyHealthReport(agent("inactive"), failure, LATER)).toBeNull();
    expect(applyHealthReport(agent("inactive"), null, LATER)).toBeNull();
    expect(applyHealthReport(agent("active"), null, LATER)).toBeNull();
  });

  it("keeps a copy of the reason, not the caller's object", () => {
    const reason = { ...failure };
    const after = applyHealthReport(agent("active"), reason, LATER);
    reason.message = "changed by the caller";
    expect(after?.statusReason?.message).toBe(failure.message);
  });
});
