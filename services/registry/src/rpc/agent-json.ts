import { deepFrozen, SizedLru } from "@agentry/core";
import { invalid } from "@agentry/errors";
import { agentPublicText } from "@agentry/events";
import {
  type Agent,
  AgentSchema,
  type AgentSpec,
  type AgentSpecJson,
  AgentSpecSchema,
  AgentView,
} from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import type { AgentFields, AgentRecord, JsonObject, JsonValue } from "../store/types.js";
import {
  agentToProto,
  jsonArrayFromValue,
  statusReasonToProto,
  statusToProto,
  toTimestamp,
} from "./convert.js";

/*
 * Agents as JSON text (proto/agentry/registry/v1/agent.proto, AgentView). What a read answers is text the
 * registry already has: each agent's texts, and its answer in AgentView PUBLIC, are kept by id with the version
 * they were made from, its `updatedAt`, which every change of the agent replaces. A process serving a version
 * another process wrote reads that version from the store first and makes its texts then, so a stale text is
 * never answered.
 */

/** The texts a read of an agent answers. */
interface AgentTexts {
  updatedAt: string;
  personality: string;
  clients: string;
  settings: string;
  plugins: string;
  /** The public record without `apiEndpoint` (`agentPublicText`). */
  public: string;
  /** The answer of a read in AgentView PUBLIC, made at the first such read; shared by every later one. */
  publicAgent?: Agent;
}

/** Characters of text kept (about 16 MB of memory at most); the least recently read agent's go first. */
const AGENT_TEXT_CACHE_CHARS = 8 * 1024 * 1024;

/** An instant as `toISOString` writes it, which is how an agent's times always reach callers. */
function canonicalTime(iso: string): string {
  return new Date(iso).toISOString();
}

function textsOf(agent: AgentRecord): AgentTexts {
  return {
    updatedAt: agent.updatedAt,
    personality: JSON.stringify(agent.personality),
    clients: JSON.stringify(agent.clients),
    settings: JSON.stringify(agent.settings),
    plugins: JSON.stringify(agent.plugins),
    public: agentPublicText({
      ...agent,
      statusReason: agent.statusReason && { ...agent.statusReason, at: canonicalTime(agent.statusReason.at) },
      createdAt: canonicalTime(agent.createdAt),
      updatedAt: canonicalTime(agent.updatedAt),
    }),
  };
}

function textsChars(texts: AgentTexts): number {
  return (
    texts.personality.length +
    texts.clients.length +
    texts.settings.length +
    texts.plugins.length +
    texts.public.length +
    64
  );
}

/** Each agent's texts, made once per version. */
export class AgentTextCache {
  private readonly entries = new SizedLru<string, AgentTexts>(AGENT_TEXT_CACHE_CHARS);

  /** The texts of the agent as read from the store. */
  read(agent: AgentRecord): AgentTexts {
    const cached = this.entries.get(agent.id);
    if (cached?.updatedAt === agent.updatedAt) return cached;
    const texts = textsOf(agent);
    this.entries.set(agent.id, texts, textsChars(texts));
    return texts;
  }
}

/** An agent as a read answers it in `view`. */
export function agentInView(agent: AgentRecord, view: AgentView, cache: AgentTextCache): Agent {
  switch (view) {
    case AgentView.PUBLIC: {
      const texts = cache.read(agent);
      texts.publicAgent ??= deepFrozen(
        create(AgentSchema, {
          id: agent.id,
          accountId: agent.accountId,
          status: statusToProto(agent.status),
          statusReason: agent.statusReason ? statusReasonToProto(agent.statusReason) : undefined,
          createTime: toTimestamp(agent.createdAt),
          updateTime: toTimestamp(agent.updatedAt),
          publicJson: texts.public,
        }),
      );
      return texts.publicAgent;
    }
    case AgentView.JSON: {
      const texts = cache.read(agent);
      return create(AgentSchema, {
        id: agent.id,
        accountId: agent.accountId,
        spec: create(AgentSpecSchema, {
          name: agent.name,
          bio: agent.bio,
          knowledge: agent.knowledge,
          goals: agent.goals,
          modelProvider: agent.modelProvider ?? undefined,
          model: agent.model ?? undefined,
          personalityJson: texts.personality,
          clientsJson: texts.clients,
          settingsJson: texts.settings,
          pluginsJson: texts.plugins,
        }),
        status: statusToProto(agent.status),
        statusReason: agent.statusReason ? statusReasonToProto(agent.statusReason) : undefined,
        createTime: toTimestamp(agent.createdAt),
        updateTime: toTimestamp(agent.updatedAt),
      });
    }
    default:
      return agentToProto(agent);
  }
}

function parsedText<T extends JsonValue>(
  text: string,
  field: string,
  isShape: (value: JsonValue) => value is T,
  shape: string,
): T {
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    throw invalid(field, `must be JSON text (${shape})`);
  }
  if (!isShape(value)) throw invalid(field, `must be JSON text of ${shape}`);
  return value;
}

const isObject = (value: JsonValue): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isArray = (value: JsonValue): value is JsonValue[] => Array.isArray(value);

/**
 * The free-form JSON fields of a request's spec: each from its text where set (a gateway of this release), from
 * its Struct or Value otherwise (one of an earlier release). Text that is not JSON of the field's shape is
 * refused with INVALID_ARGUMENT naming the field.
 */
export function specJson(spec: AgentSpec): AgentSpecJson {
  return {
    personality: spec.personalityJson
      ? parsedText(spec.personalityJson, "personality_json", isObject, "an object")
      : (spec.personality ?? {}),
    clients: spec.clientsJson
      ? parsedText(spec.clientsJson, "clients_json", isArray, "an array")
      : jsonArrayFromValue(spec.clients, "clients"),
    settings: spec.settingsJson
      ? parsedText(spec.settingsJson, "settings_json", isObject, "an object")
      : (spec.settings ?? {}),
    plugins: spec.pluginsJson
      ? parsedText(spec.pluginsJson, "plugins_json", isArray, "an array")
      : jsonArrayFromValue(spec.plugins, "plugins"),
  };
}

/** The fields of a spec, its free-form JSON from its text where set. */
export function specFromProto(spec: AgentSpec): AgentFields {
  const json = specJson(spec);
  return {
    name: spec.name,
    bio: spec.bio,
    personality: json.personality,
    knowledge: spec.knowledge,
    goals: spec.goals,
    clients: json.clients,
    settings: json.settings,
    modelProvider: spec.modelProvider ?? null,
    model: spec.model ?? null,
    plugins: json.plugins,
  };
}
