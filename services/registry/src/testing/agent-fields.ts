import type { AgentFields } from "../store/types.js";

/** The fields of an agent with nothing in them but a name, and the overrides. */
export function agentFields(overrides: Partial<AgentFields> = {}): AgentFields {
  return {
    name: "agent",
    bio: [],
    personality: {},
    knowledge: [],
    goals: [],
    clients: [],
    settings: {},
    modelProvider: null,
    model: null,
    plugins: [],
    ...overrides,
  };
}
