import { describe, expect, it } from "vitest";
import {
  type AgentView,
  agentDeletedData,
  agentEventData,
  agentPublicText,
  presentAgent,
  withApiEndpoint,
} from "./agent.js";

const agent: AgentView & { accountId: string } = {
  id: "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  accountId: "acct_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  name: "Ada",
  bio: ["Mathematician"],
  personality: { tone: "warm" },
  knowledge: ["analysis"],
  goals: ["teach"],
  clients: ["discord"],
  settings: { temperature: 0.4, secrets: { OPENAI_API_KEY: "sk-live" } },
  modelProvider: "openai",
  model: "gpt-4o-mini",
  plugins: [{ name: "search" }],
  status: "error",
  statusReason: { code: "MODEL_ERROR", message: "rejected", at: "2026-01-02T00:00:00.000Z" },
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-02T00:00:00.000Z",
};

describe("presentAgent", () => {
  it("is the agent record of the API, with apiEndpoint from the public base URL and nothing else", () => {
    const json = presentAgent(agent, "https://api.example.com");
    expect(Object.keys(json)).toEqual([
      "id",
      "name",
      "bio",
      "personality",
      "knowledge",
      "goals",
      "clients",
      "settings",
      "modelProvider",
      "model",
      "plugins",
      "status",
      "statusReason",
      "createdAt",
      "updatedAt",
      "apiEndpoint",
    ]);
    expect(json.apiEndpoint).toBe(`https://api.example.com/v1/agents/${agent.id}/messages`);
    expect(json).not.toHaveProperty("accountId");
  });
});

describe("agentEventData", () => {
  it("is the presented agent without settings.secrets, leaving the agent itself as it was", () => {
    const data = agentEventData(agent, "https://api.example.com");
    expect(data.settings).toEqual({ temperature: 0.4 });
    expect(JSON.stringify(data)).not.toContain("sk-live");
    expect(agent.settings.secrets).toEqual({ OPENAI_API_KEY: "sk-live" });
    const { settings: _a, ...rest } = data;
    const { settings: _b, ...presented } = presentAgent(agent, "https://api.example.com");
    expect(rest).toEqual(presented);
  });

  it("keeps settings without secrets as they are", () => {
    const plain = { ...agent, settings: { temperature: 1 } };
    expect(agentEventData(plain, "https://x.test").settings).toEqual({ temperature: 1 });
  });

  it("agent.deleted carries only the id", () => {
    expect(agentDeletedData(agent.id)).toEqual({ id: agent.id });
  });
});

describe("agentPublicText", () => {
  it("completed with apiEndpoint, is byte for byte the JSON of presentAgent", () => {
    const text = agentPublicText(agent);
    expect(text).not.toContain("apiEndpoint");
    expect(text).not.toContain("sk-live");
    for (const base of ["https://api.example.com", 'http://h:1/a "quoted"\\path']) {
      expect(withApiEndpoint(text, base, agent.id)).toBe(JSON.stringify(presentAgent(agent, base)));
    }
    const odd = { ...agent, personality: { "2": "b", "1": "a", "\u2028": "\ud800" }, statusReason: null };
    expect(withApiEndpoint(agentPublicText(odd), "", odd.id)).toBe(JSON.stringify(presentAgent(odd, "")));
  });
});
