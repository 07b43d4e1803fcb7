import { newId, publicSettings } from "@agentry/core";
import type { AgentRecord, JsonObject, NewOutboxEvent, OutboxEvent } from "./types.js";

/**
 * The events of each change to an agent (docs/api/webhooks.md, "Events"), written by the stores in the transaction of
 * the change, each with its public id. `agent.created`, `agent.updated` and `agent.status_changed` carry
 * `{ agent }`, the record after the change; `agent.deleted` carries `{ accountId, agentId }`, since nothing else
 * of the agent remains. What receivers get of them is `webhookEvents` (outbox/webhooks.ts).
 */
export function agentCreated(agent: AgentRecord): NewOutboxEvent[] {
  return [event("agent.created", agent)];
}

/**
 * Every update is `agent.updated`, whatever it changed (an empty one too); one that changes the status is
 * `agent.status_changed` as well.
 */
export function agentUpdated(before: AgentRecord, after: AgentRecord): NewOutboxEvent[] {
  return [event("agent.updated", after), ...agentStatusChanged(before, after)];
}

/**
 * `agent.status_changed` when the status changed, else nothing. It is all a health report writes (the service
 * setting `error`, or a success taking the agent out of it): a new reason for an agent already in `error` is no
 * event, so consumers hear of each failure once.
 */
export function agentStatusChanged(before: AgentRecord, after: AgentRecord): NewOutboxEvent[] {
  if (after.status === before.status) return [];
  return [event("agent.status_changed", after)];
}

export function agentDeleted(accountId: string, agentId: string): NewOutboxEvent[] {
  return [{ id: newId("event"), type: "agent.deleted", accountId, agentId, payload: { accountId, agentId } }];
}

function event(type: OutboxEvent["type"], agent: AgentRecord): NewOutboxEvent {
  return {
    id: newId("event"),
    type,
    accountId: agent.accountId,
    agentId: agent.id,
    payload: { agent: agentPayload(agent) },
  };
}

/**
 * The agent as an event payload: the record's fields in JSON, copied, without `settings.secrets`. The outbox keeps
 * events after relaying them, and a copy of an agent's secrets has no business there.
 */
function agentPayload(agent: AgentRecord): JsonObject {
  return {
    id: agent.id,
    accountId: agent.accountId,
    name: agent.name,
    bio: [...agent.bio],
    personality: agent.personality,
    knowledge: [...agent.knowledge],
    goals: [...agent.goals],
    clients: [...agent.clients],
    settings: publicSettings(agent.settings),
    modelProvider: agent.modelProvider,
    model: agent.model,
    plugins: [...agent.plugins],
    status: agent.status,
    statusReason: agent.statusReason === null ? null : { ...agent.statusReason },
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
  };
}
