import { type Agent, type AgentSpecJson, agentSpecJson } from "@agentry/proto";

/*
 * A message's agent arrives with its free-form JSON fields as text (AgentSpec's *_json fields), or as Struct and
 * Value messages from a sender of an earlier release. The service reads them as plain JSON, parsed once per agent
 * message however many parts of a turn look at them, and never turns them into protobuf messages.
 */

const parsed = new WeakMap<object, Readonly<AgentSpecJson>>();
const NONE: Readonly<AgentSpecJson> = Object.freeze({
  personality: {},
  clients: [],
  settings: {},
  plugins: [],
});

/** The agent's `personality`, `clients`, `settings` and `plugins`; shared between readers, so never changed. */
export function specJsonOf(agent: Agent | undefined): Readonly<AgentSpecJson> {
  const spec = agent?.spec;
  if (!spec) return NONE;
  let json = parsed.get(spec);
  if (!json) {
    json = agentSpecJson(spec);
    parsed.set(spec, json);
  }
  return json;
}
