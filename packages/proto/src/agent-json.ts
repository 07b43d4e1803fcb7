import { fromJson, type JsonObject, type JsonValue, toJson } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { AgentSpec } from "./gen/agentry/registry/v1/agent_pb.js";

/*
 * An agent's free-form JSON fields travel as JSON text (AgentSpec's *_json fields): a protobuf Struct is a message
 * per JSON value, the largest cost of carrying an agent. Senders of earlier releases set only the Struct and
 * Value fields, so every reader takes the text when it is set and those fields otherwise.
 */

/** The four free-form JSON fields of an agent. */
export interface AgentSpecJson {
  personality: JsonObject;
  clients: JsonValue[];
  settings: JsonObject;
  plugins: JsonValue[];
}

/** The value a JSON text field holds; text of the wrong shape is a defect of its sender. */
function parsed<T extends JsonValue>(
  text: string,
  field: string,
  isShape: (value: JsonValue) => value is T,
): T {
  const value = JSON.parse(text) as JsonValue;
  if (!isShape(value)) throw new TypeError(`${field} holds JSON of the wrong shape`);
  return value;
}

function isObject(value: JsonValue): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isArray(value: JsonValue): value is JsonValue[] {
  return Array.isArray(value);
}

function arrayOfValue(value: Value | undefined): JsonValue[] {
  if (!value || value.kind.case === undefined) return [];
  const json = toJson(ValueSchema, value);
  return Array.isArray(json) ? json : [];
}

/** The JSON fields of a spec, from their text where set and from their Struct and Value forms otherwise. */
export function agentSpecJson(spec: AgentSpec | undefined): AgentSpecJson {
  return {
    personality: spec?.personalityJson
      ? parsed(spec.personalityJson, "personality_json", isObject)
      : (spec?.personality ?? {}),
    clients: spec?.clientsJson
      ? parsed(spec.clientsJson, "clients_json", isArray)
      : arrayOfValue(spec?.clients),
    settings: spec?.settingsJson
      ? parsed(spec.settingsJson, "settings_json", isObject)
      : (spec?.settings ?? {}),
    plugins: spec?.pluginsJson
      ? parsed(spec.pluginsJson, "plugins_json", isArray)
      : arrayOfValue(spec?.plugins),
  };
}

/** The JSON text fields of a spec holding `json`'s fields. */
export function specJsonText(
  json: Partial<AgentSpecJson>,
): Partial<Pick<AgentSpec, "personalityJson" | "clientsJson" | "settingsJson" | "pluginsJson">> {
  return {
    ...(json.personality ? { personalityJson: JSON.stringify(json.personality) } : {}),
    ...(json.clients ? { clientsJson: JSON.stringify(json.clients) } : {}),
    ...(json.settings ? { settingsJson: JSON.stringify(json.settings) } : {}),
    ...(json.plugins ? { pluginsJson: JSON.stringify(json.plugins) } : {}),
  };
}

/** The Struct and Value fields of a spec holding `json`'s fields: the form readers of earlier releases take. */
export function specStructs(
  json: Partial<AgentSpecJson>,
): Partial<Pick<AgentSpec, "personality" | "clients" | "settings" | "plugins">> {
  return {
    ...(json.personality ? { personality: json.personality } : {}),
    ...(json.clients ? { clients: fromJson(ValueSchema, json.clients) } : {}),
    ...(json.settings ? { settings: json.settings } : {}),
    ...(json.plugins ? { plugins: fromJson(ValueSchema, json.plugins) } : {}),
  };
}
