import { updatedSettings } from "@agentry/core";
import { nextUpdatedAt } from "./precondition.js";
import type { AgentPatch, AgentRecord } from "./types.js";

/**
 * The record after a partial update, at time `now`. Status rules (docs/api/agents.md, "Lifecycle"): a PATCH of
 * `status` sets it; a PATCH that changes `modelProvider`, `model` or `settings` takes an agent out of `error`
 * (back to `active`), since the configuration that failed has changed. Leaving `error` clears `statusReason`.
 * New `settings` without `secrets` keep the stored secrets (`updatedSettings`).
 */
export function applyAgentPatch(record: AgentRecord, patch: AgentPatch, now: string): AgentRecord {
  const { status, ...fields } = patch;
  const next: AgentRecord = { ...record, ...fields, updatedAt: nextUpdatedAt(record.updatedAt, now) };
  if (fields.settings !== undefined) next.settings = updatedSettings(record.settings, fields.settings);
  const reconfigured = "modelProvider" in patch || "model" in patch || "settings" in patch;
  if (status !== undefined) next.status = status;
  else if (record.status === "error" && reconfigured) next.status = "active";
  if (next.status !== "error") next.statusReason = null;
  return next;
}
