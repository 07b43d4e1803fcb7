import { publicSettings } from "@agentry/core";
import type { JsonObject, JsonValue } from "./types.js";

export type AgentStatusName = "active" | "inactive" | "error";

/** An agent as a service holds it, whatever its source (a registry record, an RPC message turned plain). */
export interface AgentView {
  id: string;
  name: string;
  bio: readonly string[];
  personality: JsonObject;
  knowledge: readonly string[];
  goals: readonly string[];
  clients: readonly JsonValue[];
  settings: JsonObject;
  modelProvider: string | null;
  model: string | null;
  plugins: readonly JsonValue[];
  status: AgentStatusName;
  statusReason: { code: string; message: string; at: string } | null;
  createdAt: string;
  updatedAt: string;
}

/** The agent record of docs/api/agents.md, "Record": what the REST API answers and agent events carry. */
export interface AgentJson {
  id: string;
  name: string;
  bio: string[];
  personality: JsonObject;
  knowledge: string[];
  goals: string[];
  clients: JsonValue[];
  settings: JsonObject;
  modelProvider: string | null;
  model: string | null;
  plugins: JsonValue[];
  status: AgentStatusName;
  statusReason: { code: string; message: string; at: string } | null;
  createdAt: string;
  updatedAt: string;
  apiEndpoint: string;
}

/** The absolute URL of an agent's messages endpoint, from the public base URL (without a trailing slash). */
export function agentEndpoint(publicBaseUrl: string, agentId: string): string {
  return `${publicBaseUrl}/v1/agents/${agentId}/messages`;
}

/**
 * The public JSON of an agent, for the API and for events alike. Fields are picked one by one, so whatever else a
 * view holds (the account id of a registry record) never reaches a caller or a receiver; the write-only
 * `settings.secrets` (character files keep model keys there) never leaves either.
 */
export function presentAgent(agent: AgentView, publicBaseUrl: string): AgentJson {
  return {
    id: agent.id,
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
    apiEndpoint: agentEndpoint(publicBaseUrl, agent.id),
  };
}

/**
 * The public JSON of an agent as text, without `apiEndpoint` (the one member that depends on where it is served):
 * what a service keeps and carries, and `withApiEndpoint` completes.
 */
export function agentPublicText(agent: AgentView): string {
  const { apiEndpoint: _endpoint, ...record } = presentAgent(agent, "");
  return JSON.stringify(record);
}

/**
 * The text of `presentAgent(agent, publicBaseUrl)` from `agentPublicText(agent)`: byte for byte the same, since
 * `apiEndpoint` is the record's last member.
 */
export function withApiEndpoint(publicText: string, publicBaseUrl: string, agentId: string): string {
  return `${publicText.slice(0, -1)},"apiEndpoint":${JSON.stringify(agentEndpoint(publicBaseUrl, agentId))}}`;
}

/**
 * The `data` of `agent.created`, `agent.updated` and `agent.status_changed`: the agent as the API shows it. An
 * event goes to a URL its account chose, is kept in the delivery log and may be redelivered; like every read, it
 * carries no secret.
 */
export function agentEventData(agent: AgentView, publicBaseUrl: string): AgentJson {
  return presentAgent(agent, publicBaseUrl);
}

/** The `data` of `agent.deleted`: nothing else of the agent remains. */
export interface AgentDeletedData {
  [key: string]: JsonValue;
  id: string;
}

export function agentDeletedData(agentId: string): AgentDeletedData {
  return { id: agentId };
}
