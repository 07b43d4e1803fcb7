import {
  type AgentJson,
  type AgentStatusName,
  presentAgent as presentAgentView,
  withApiEndpoint,
} from "@agentry/events";
import {
  type Agent,
  AgentSortField,
  type AgentSpec,
  AgentSpecSchema,
  AgentStatus,
  agentSpecJson,
  SortOrder,
  specJsonText,
  specStructs,
} from "@agentry/proto";
import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { FieldMaskSchema, timestampDate } from "@bufbuild/protobuf/wkt";
import { agentETag } from "../http/conditional.js";
import type { CreateAgentBody, ListAgentsQuery, UpdateAgentBody } from "../validation/agents.js";

export type { AgentJson, AgentStatusName };

const STATUS_NAMES: Record<AgentStatus, AgentStatusName> = {
  [AgentStatus.UNSPECIFIED]: "active",
  [AgentStatus.ACTIVE]: "active",
  [AgentStatus.INACTIVE]: "inactive",
  [AgentStatus.ERROR]: "error",
};

export const STATUS_VALUES: Record<AgentStatusName, AgentStatus> = {
  active: AgentStatus.ACTIVE,
  inactive: AgentStatus.INACTIVE,
  error: AgentStatus.ERROR,
};

export const SORT_FIELDS: Record<ListAgentsQuery["sortBy"], AgentSortField> = {
  createdAt: AgentSortField.CREATE_TIME,
  name: AgentSortField.NAME,
  status: AgentSortField.STATUS,
};

export const SORT_ORDERS: Record<ListAgentsQuery["order"], SortOrder> = {
  asc: SortOrder.ASC,
  desc: SortOrder.DESC,
};

export function isoTime(value: Parameters<typeof timestampDate>[0] | undefined): string {
  return value ? timestampDate(value).toISOString() : new Date(0).toISOString();
}

/**
 * The public JSON of an agent as text, byte for byte `JSON.stringify(presentAgent(agent, publicBaseUrl))`: the
 * registry's own text of it where the read asked for one (AgentView PUBLIC), so a read writes what the registry
 * already had; presented here from the spec otherwise (a registry of an earlier release).
 */
export function agentText(agent: Agent, publicBaseUrl: string): string {
  if (agent.publicJson) return withApiEndpoint(agent.publicJson, publicBaseUrl, agent.id);
  return JSON.stringify(presentAgent(agent, publicBaseUrl));
}

/** What a read writes of one agent: its version and its public JSON as UTF-8, `apiEndpoint` included. */
export interface AgentAnswer {
  /** `updatedAt`, the agent's version. */
  updatedAt: string;
  /** Its ETag. */
  etag: string;
  /** `agentText(agent, publicBaseUrl)` as bytes. */
  json: Buffer;
  /** The whole body of `GET /v1/agents/{id}`: `{"success":true,"data":<json>}`. */
  body: Buffer;
  publicBaseUrl: string;
}

/**
 * Answers made, by the registry's answer they were made from. The registry of this process hands every read of
 * an agent's version the same frozen message (AgentView PUBLIC), so each version is presented and encoded once
 * here, not on every read; an answer decoded from the network is a new message each time and is made again.
 */
const answers = new WeakMap<Agent, AgentAnswer>();

const BODY_START = Buffer.from('{"success":true,"data":');
const BODY_END = Buffer.from("}");

/** The bytes a read writes of `agent` (see `AgentAnswer`), made once per message the registry answered. */
export function agentAnswer(agent: Agent, publicBaseUrl: string): AgentAnswer {
  const kept = answers.get(agent);
  if (kept?.publicBaseUrl === publicBaseUrl) return kept;
  const updatedAt = isoTime(agent.updateTime);
  const json = Buffer.from(agentText(agent, publicBaseUrl));
  const answer: AgentAnswer = {
    updatedAt,
    etag: agentETag(updatedAt),
    json,
    body: Buffer.concat([BODY_START, json, BODY_END]),
    publicBaseUrl,
  };
  answers.set(agent, answer);
  return answer;
}

/**
 * The public JSON of an agent; `apiEndpoint` is built from the configured public base URL. The presentation is
 * `@agentry/events`' own, which agent events carry too.
 */
export function presentAgent(agent: Agent, publicBaseUrl: string): AgentJson {
  if (agent.publicJson) return JSON.parse(agentText(agent, publicBaseUrl)) as AgentJson;
  const spec = agent.spec;
  const json = agentSpecJson(spec);
  return presentAgentView(
    {
      id: agent.id,
      name: spec?.name ?? "",
      bio: spec?.bio ?? [],
      personality: json.personality,
      knowledge: spec?.knowledge ?? [],
      goals: spec?.goals ?? [],
      clients: json.clients,
      settings: json.settings,
      modelProvider: spec?.modelProvider ?? null,
      model: spec?.model ?? null,
      plugins: json.plugins,
      status: STATUS_NAMES[agent.status],
      statusReason: agent.statusReason
        ? {
            code: agent.statusReason.code,
            message: agent.statusReason.message,
            at: isoTime(agent.statusReason.time),
          }
        : null,
      createdAt: isoTime(agent.createTime),
      updatedAt: isoTime(agent.updateTime),
    },
    publicBaseUrl,
  );
}

type SpecFields = Omit<UpdateAgentBody, "status">;

/** REST field → AgentSpec field path of the update mask. */
const MASK_PATHS: Record<keyof SpecFields, string> = {
  name: "name",
  bio: "bio",
  personality: "personality",
  knowledge: "knowledge",
  goals: "goals",
  clients: "clients",
  settings: "settings",
  modelProvider: "model_provider",
  model: "model",
  plugins: "plugins",
};

/**
 * An AgentSpec holding the supplied fields; `null` model fields stay unset, which the mask turns into a reset. The
 * free-form JSON fields go as text and, for registries of the earlier release, in their Struct and Value forms too.
 */
export function toAgentSpec(body: CreateAgentBody | SpecFields): AgentSpec {
  const json = {
    ...(body.personality ? { personality: body.personality as JsonObject } : {}),
    ...(body.settings ? { settings: body.settings as JsonObject } : {}),
    ...(body.clients ? { clients: body.clients as JsonValue[] } : {}),
    ...(body.plugins ? { plugins: body.plugins as JsonValue[] } : {}),
  };
  return create(AgentSpecSchema, {
    name: body.name ?? "",
    bio: body.bio ?? [],
    knowledge: body.knowledge ?? [],
    goals: body.goals ?? [],
    ...specStructs(json),
    ...specJsonText(json),
    ...(body.modelProvider != null ? { modelProvider: body.modelProvider } : {}),
    ...(body.model != null ? { model: body.model } : {}),
  });
}

/** The update mask naming exactly the fields present in a PATCH body. */
export function toUpdateMask(body: SpecFields) {
  const paths = (Object.keys(MASK_PATHS) as (keyof SpecFields)[])
    .filter((field) => body[field] !== undefined)
    .map((field) => MASK_PATHS[field]);
  return create(FieldMaskSchema, { paths });
}
