import { type AgentJson, type AgentStatusName, presentAgent as presentAgentView } from "@agentry/events";
import {
  type Agent,
  AgentSortField,
  type AgentSpec,
  AgentSpecSchema,
  AgentStatus,
  SortOrder,
} from "@agentry/proto";
import { create, fromJson, type JsonObject, type JsonValue, toJson } from "@bufbuild/protobuf";
import { FieldMaskSchema, timestampDate, ValueSchema } from "@bufbuild/protobuf/wkt";
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

function jsonArray(value: AgentSpec["clients"]): JsonValue[] {
  if (!value) return [];
  const json = toJson(ValueSchema, value);
  return Array.isArray(json) ? json : [];
}

function isoTime(value: Parameters<typeof timestampDate>[0] | undefined): string {
  return value ? timestampDate(value).toISOString() : new Date(0).toISOString();
}

/**
 * The public JSON of an agent; `apiEndpoint` is built from the configured public base URL. The presentation is
 * `@agentry/events`' own, which agent events carry too.
 */
export function presentAgent(agent: Agent, publicBaseUrl: string): AgentJson {
  const spec = agent.spec;
  return presentAgentView(
    {
      id: agent.id,
      name: spec?.name ?? "",
      bio: spec?.bio ?? [],
      personality: spec?.personality ?? {},
      knowledge: spec?.knowledge ?? [],
      goals: spec?.goals ?? [],
      clients: jsonArray(spec?.clients),
      settings: spec?.settings ?? {},
      modelProvider: spec?.modelProvider ?? null,
      model: spec?.model ?? null,
      plugins: jsonArray(spec?.plugins),
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

/** An AgentSpec holding the supplied fields; `null` model fields stay unset, which the mask turns into a reset. */
export function toAgentSpec(body: CreateAgentBody | SpecFields): AgentSpec {
  return create(AgentSpecSchema, {
    name: body.name ?? "",
    bio: body.bio ?? [],
    knowledge: body.knowledge ?? [],
    goals: body.goals ?? [],
    ...(body.personality ? { personality: body.personality as JsonObject } : {}),
    ...(body.settings ? { settings: body.settings as JsonObject } : {}),
    ...(body.clients ? { clients: fromJson(ValueSchema, body.clients as JsonValue[]) } : {}),
    ...(body.plugins ? { plugins: fromJson(ValueSchema, body.plugins as JsonValue[]) } : {}),
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
