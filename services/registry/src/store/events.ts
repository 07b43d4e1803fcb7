import { publicSettings } from "@agentry/core";
import type { AgentRecord, JsonObject, NewOutboxEvent, OutboxEvent } from "./types.js";

/**
 * The events of each change to an agent (decisions.md, "Webhooks"), written by the stores in the transaction of
 * the change. Payloads: `agent.created` and `agent.updated` carry `{ agent }`, the record after the change;
 * `agent.status_changed` carries `{ accountId, agentId, from, to, statusReason }`; `agent.deleted` carries
 * `{ accountId, agentId }`, since nothing else of the agent remains.
 */
export function agentCreated(agent: AgentRecord): NewOutboxEvent[] {
  return [event("agent.created", agent, { agent: agentPayload(agent) })];
}

/** Every update is `agent.updated`; one that changes the status is `agent.status_changed` as well. */
export function agentUpdated(before: AgentRecord, after: AgentRecord): NewOutboxEvent[] {
  return [
    event("agent.updated", after, { agent: agentPayload(after) }),
    ...agentStatusChanged(before, after),
  ];
}

/**
 * `agent.status_changed` when the status changed, else nothing. It is all a health report writes: a new reason
 * for an agent already in `error` is no event, so consumers hear of each failure once.
 */
export function agentStatusChanged(before: AgentRecord, after: AgentRecord): NewOutboxEvent[] {
  if (after.status === before.status) return [];
  return [
    event("agent.status_changed", after, {
      accountId: after.accountId,
      agentId: after.id,
      from: before.status,
      to: after.status,
      statusReason: after.statusReason === null ? null : { ...after.statusReason },
    }),
  ];
}

export function agentDeleted(accountId: string, agentId: string): NewOutboxEvent[] {
  return [{ type: "agent.deleted", accountId, agentId, payload: { accountId, agentId } }];
}

function event(type: OutboxEvent["type"], agent: AgentRecord, payload: JsonObject): NewOutboxEvent {
  return { type, accountId: agent.accountId, agentId: agent.id, payload };
}

/** The agent as an event payload: the same fields as the record, in JSON, without the write-only secrets. */
function agentPayload(agent: AgentRecord): JsonObject {
  return {
    id: agent.id,
    accountId: agent.accountId,
    name: agent.name,
    bio: agent.bio,
    personality: agent.personality,
    knowledge: agent.knowledge,
    goals: agent.goals,
    clients: agent.clients,
    settings: publicSettings(agent.settings),
    modelProvider: agent.modelProvider,
    model: agent.model,
    plugins: agent.plugins,
    status: agent.status,
    statusReason: agent.statusReason === null ? null : { ...agent.statusReason },
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
  };
}
