import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

/*
 * docs/api/providers.md, "Choosing a provider and model", on a server with no provider keys: an agent may name
 * a hosted provider, with a warning, and a message to it fails with 502 MODEL_ERROR naming the variable to set,
 * putting the agent in `error` however the message was sent.
 */

type Warning = { field: string; issue: string };
type AgentJson = { id: string; status: string; statusReason: { code: string; message: string } | null };

let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  // No provider keys; the local model is never loaded here.
  h = await startHarness({ LOCAL_MODEL_PATH: "/nonexistent/model.gguf" });
  tenant = await h.tenant();
});
afterAll(() => h.close());

async function newAgent(modelProvider: string): Promise<{ id: string; warnings: Warning[] }> {
  const res = await h.request<{ data: AgentJson; warnings: Warning[] }>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: "Unconfigured", modelProvider, model: "some-model" },
  });
  expect(res.status).toBe(201);
  return { id: res.body.data.id, warnings: res.body.warnings };
}

async function agent(id: string): Promise<AgentJson> {
  return (await h.request<{ data: AgentJson }>("GET", `/v1/agents/${id}`, { key: tenant.key })).body.data;
}

const VARIABLE = { openai: /OPENAI_API_KEY/, anthropic: /ANTHROPIC_API_KEY/ } as const;

describe("an agent naming a provider with no configuration here", () => {
  it.each(["openai", "anthropic"] as const)(
    "%s: is created with a warning naming the variable",
    async (name) => {
      const { warnings } = await newAgent(name);
      expect(warnings).toEqual([{ field: "modelProvider", issue: expect.stringMatching(VARIABLE[name]) }]);
    },
  );

  it.each(["openai", "anthropic"] as const)(
    "%s: a JSON send fails with 502 MODEL_ERROR naming the variable, and the agent goes to error",
    async (name) => {
      const { id } = await newAgent(name);
      const res = await h.request<ErrorBody>("POST", `/v1/agents/${id}/messages`, {
        key: tenant.key,
        body: { text: "Hi" },
      });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe("MODEL_ERROR");
      expect(res.body.error.message).toMatch(VARIABLE[name]);
      expect(await agent(id)).toMatchObject({
        status: "error",
        statusReason: { code: "MODEL_ERROR", message: expect.stringMatching(VARIABLE[name]) },
      });
    },
  );

  it("a streamed send fails with MODEL_ERROR naming the variable, and the agent goes to error", async () => {
    const { id } = await newAgent("openai");
    const res = await fetch(`${h.url}/v1/agents/${id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "Hi", stream: true }),
    });
    const text = await res.text();
    // The provider is resolved before the stream starts, so the failure is the error envelope.
    expect(res.status).toBe(502);
    expect(JSON.parse(text).error.code).toBe("MODEL_ERROR");
    expect(text).toMatch(/OPENAI_API_KEY/);
    expect(await agent(id)).toMatchObject({ status: "error", statusReason: { code: "MODEL_ERROR" } });
  });

  it("a background send fails with MODEL_ERROR naming the variable, and the agent goes to error", async () => {
    const { id } = await newAgent("anthropic");
    const accepted = await h.request<{ data: { id: string; status: string } }>(
      "POST",
      `/v1/agents/${id}/messages`,
      { key: tenant.key, body: { text: "Hi", background: true } },
    );
    expect(accepted.status).toBe(202);
    const messageId = accepted.body.data.id;
    let read: { status: string; error?: { code: string; message: string } } = { status: "pending" };
    for (let tries = 0; tries < 100 && read.status === "pending"; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      read = (
        await h.request<{ data: typeof read }>("GET", `/v1/agents/${id}/messages/${messageId}`, {
          key: tenant.key,
        })
      ).body.data;
    }
    expect(read).toMatchObject({
      status: "failed",
      error: { code: "MODEL_ERROR", message: expect.stringMatching(/ANTHROPIC_API_KEY/) },
    });
    // The agent's health is recorded once the run has ended.
    for (let tries = 0; tries < 100 && (await agent(id)).status !== "error"; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await agent(id)).toMatchObject({ status: "error", statusReason: { code: "MODEL_ERROR" } });
  });
});
