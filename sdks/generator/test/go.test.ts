import { describe, expect, it } from "vitest";
import { emitter, goName } from "../src/go.js";
import { loadModel } from "../src/model.js";

const files = emitter.emit(loadModel());
const file = (path: string) => files.find((f) => f.path === path)?.contents ?? "";

describe("go emitter", () => {
  it("spells identifiers the Go way", () => {
    expect(goName("agentId")).toBe("AgentID");
    expect(goName("apiKeys")).toBe("APIKeys");
    expect(goName("ApiKeyCreated")).toBe("APIKeyCreated");
    expect(goName("agents:read")).toBe("AgentsRead");
    expect(goName("AGENT_NOT_FOUND")).toBe("AgentNotFound");
    expect(goName("openai")).toBe("OpenAI");
    expect(goName("message.completed")).toBe("MessageCompleted");
  });

  it("writes only *_gen.go files, marked as generated", () => {
    expect(files.map((f) => f.path).sort()).toEqual(["go/models_gen.go", "go/services_gen.go"]);
    for (const f of files) {
      expect(f.contents.split("\n")[0]).toMatch(/^\/\/ Code generated .* DO NOT EDIT\.$/);
      expect(emitter.generatedFiles?.test(f.path)).toBe(true);
    }
    expect(emitter.generatedFiles?.test("go/client.go")).toBe(false);
  });

  it("maps optional, nullable and hidden fields", () => {
    const models = file("go/models_gen.go");
    expect(models).toContain('Model Nullable[string] `json:"model,omitzero"`');
    expect(models).toContain('ModelProvider *ModelProvider `json:"modelProvider"`');
    expect(models).toContain('Bio []string `json:"bio,omitzero"`');
    expect(models).toContain("type CreateAgentParams struct");
    // The streaming method sets `stream` itself.
    expect(models).not.toContain('json:"stream');
  });

  it("aligns consecutive fields as gofmt does", () => {
    expect(file("go/models_gen.go")).toContain(
      "type AgentClient struct {\n\tOfString            *string\n\tOfClientIntegration *ClientIntegration\n}",
    );
    expect(file("go/models_gen.go")).not.toMatch(/ +\n/);
  });

  it("gives every operation a method, with the retry safety of the model", () => {
    const services = file("go/services_gen.go");
    for (const method of [
      "func (s *AgentService) Create(ctx context.Context, params CreateAgentParams, opts ...Option) (*Agent, error)",
      "func (s *AgentService) List(ctx context.Context, params ListAgentsParams, opts ...Option) (*Page[Agent], error)",
      "func (s *AgentService) ListAll(ctx context.Context, params ListAgentsParams, opts ...Option) iter.Seq2[Agent, error]",
      "func (s *AgentMessageService) Stream(ctx context.Context, agentID string, params SendMessageParams, opts ...Option) *MessageStream",
      "func (s *APIKeyService) Revoke(ctx context.Context, keyID string, opts ...Option) (*APIKeyRevoked, error)",
    ]) {
      expect(services).toContain(method);
    }
    expect(services).toContain('path: "/agents", body: body, safety: retryUnsafe}');
    expect(services).toContain(
      'path: "/agents/" + agentIDSegment + "/messages", body: body, safety: retryMessage}',
    );
  });
});
