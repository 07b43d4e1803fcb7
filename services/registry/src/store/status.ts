import { newId } from "@agentry/core";
import { nextUpdatedAt } from "./precondition.js";
import type { AgentFields, AgentRecord, StatusReason } from "./types.js";

/*
 * The status lifecycle of docs/api/agents.md, "Lifecycle", except what a PATCH does (patch.ts): a new agent is `active`; a lasting
 * provider failure puts it in `error` with a reason, and its next successful message takes it out again.
 */

/** A new agent of the account, at time `now`; `id` is given only to make again an agent created earlier. */
export function newAgent(
  accountId: string,
  fields: AgentFields,
  now: string,
  id: string = newId("agent"),
): AgentRecord {
  return {
    ...fields,
    id,
    accountId,
    status: "active",
    statusReason: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The record after a health report at time `now`: a failure puts the agent in `error` with its reason (an agent
 * already there takes the new one), a success (null) takes it out of `error`. Null when the report changes
 * nothing: an `inactive` agent was switched off by its owner, and a failure must not switch it back on.
 */
export function applyHealthReport(
  record: AgentRecord,
  failure: StatusReason | null,
  now: string,
): AgentRecord | null {
  if (failure) {
    if (record.status === "inactive") return null;
    return {
      ...record,
      status: "error",
      statusReason: { ...failure },
      updatedAt: nextUpdatedAt(record.updatedAt, now),
    };
  }
  if (record.status !== "error") return null;
  return { ...record, status: "active", statusReason: null, updatedAt: nextUpdatedAt(record.updatedAt, now) };
}
