import { describe, expect, it } from "vitest";
import { emitter, goName } from "../src/go.js";
import { loadModel } from "../src/model.js";

const model = loadModel();
const files = emitter.emit(model);
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

  it("gives every operation a method, and says which are sent with an Idempotency-Key", () => {
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
    expect(services).toContain('req := &request{method: http.MethodPost, path: "/agents", body: body}');
    expect(services).not.toContain("safety");
    const docs = (name: string) => services.slice(0, services.indexOf(name)).split("\n\n").at(-1) ?? "";
    expect(docs("func (s *AgentService) Create(")).toContain("// Sent with an Idempotency-Key");
    expect(docs("func (s *AgentService) Delete(")).toContain("WithIdempotencyKey");
    expect(docs("func (s *AgentService) Get(")).toContain("// Retried on 408, 409 (not AGENT_INACTIVE)");
    expect(docs("func (s *AgentService) Get(")).not.toContain("Idempotency-Key");
    // The stream and the background send are methods of their own.
    expect(services.match(/Sent with an Idempotency-Key/g)?.length).toBe(
      model.operations.filter((op) => op.idempotencyKey).length + 2,
    );
  });

  it("sends in the background, reads a background message, and waits for it", () => {
    const services = file("go/services_gen.go");
    for (const method of [
      "func (s *AgentMessageService) SendBackground(ctx context.Context, agentID string, params SendMessageParams, opts ...Option) (*BackgroundMessageAccepted, error)",
      "func (s *AgentMessageService) Get(ctx context.Context, agentID string, messageID string, opts ...Option) (*HistoryMessage, error)",
      "func (s *AgentMessageService) GetBackground(ctx context.Context, agentID string, messageID string, opts ...Option) (*BackgroundMessage, error)",
      "func (s *AgentMessageService) WaitForBackground(ctx context.Context, agentID string, messageID string, opts ...Option) (*BackgroundMessage, error)",
    ]) {
      expect(services).toContain(method);
    }
    expect(services).toContain('\tbody, err := marshalBody(params, "background", true)');
    expect(services).toContain('\treturn decodeVariant[BackgroundMessage](out.Data, "status", "Get")');
    expect(services).toContain(
      '\t}, func(answer *BackgroundMessage) bool { return string(answer.Status) == "pending" })',
    );
    // Send and Stream no longer take the field that asks for the other answer.
    const models = file("go/models_gen.go");
    const params = models.slice(models.indexOf("type SendMessageParams struct"));
    expect(params.slice(0, params.indexOf("\n}\n"))).not.toContain("Background");
    expect(models).toContain('\tStatus BackgroundMessageStatus `json:"status"`');
    expect(models).toContain('\tUsage *Usage `json:"usage,omitzero"`');
  });

  it("pages cursor lists, streams NDJSON, and gives each answer of an import a method of its own", () => {
    const services = file("go/services_gen.go");
    for (const method of [
      "func (s *AgentMessageService) List(ctx context.Context, agentID string, params ListMessagesParams, opts ...Option) (*CursorPage[HistoryMessage], error)",
      "func (s *AgentMessageService) ListAll(ctx context.Context, agentID string, params ListMessagesParams, opts ...Option) iter.Seq2[HistoryMessage, error]",
      "func (s *WebhookEndpointDeliveryService) ListAll(ctx context.Context, webhookID string, params ListWebhookDeliveriesParams, opts ...Option) iter.Seq2[Delivery, error]",
      "func (s *UserService) Export(ctx context.Context, userID string, opts ...Option) iter.Seq2[UserExportLine, error]",
      "func (s *UsageService) Get(ctx context.Context, params GetUsageParams, opts ...Option) (*UsageReport, error)",
      "func (s *AgentUsageService) Get(ctx context.Context, agentID string, params GetAgentUsageParams, opts ...Option) (*UsageReport, error)",
      "func (s *AgentService) ImportCharacter(ctx context.Context, character map[string]any, params ImportCharacterParams, opts ...Option) (*CharacterImport, error)",
      "func (s *AgentService) ImportCharacterDryRun(ctx context.Context, character map[string]any, params ImportCharacterDryRunParams, opts ...Option) (*CharacterImportPreview, error)",
      "func (s *AgentService) ExportCharacter(ctx context.Context, agentID string, opts ...Option) (*ExportedCharacterFile, error)",
    ]) {
      expect(services).toContain(method);
    }
    expect(services).toContain('\tquery.Set("dryRun", "true")');
    expect(services).toContain('\t\tquery.Set("groupBy", commaSeparated(params.GroupBy))');
    expect(services).toContain("\treturn streamLines[UserExportLine](ctx, s.client, req, opts)");
    // An export's line is a message or a memory, decoded by the key only its type has.
    expect(file("go/models_gen.go")).toContain(
      "type UserExportLine struct {\n\tOfHistoryMessage *HistoryMessage\n\tOfMemory         *Memory\n}",
    );
    expect(file("go/models_gen.go")).toContain(
      '\tif jsonHasKey(data, "conversationId") {\n\t\tu.OfHistoryMessage = new(HistoryMessage)\n\t\treturn json.Unmarshal(data, u.OfHistoryMessage)\n\t}\n\tif jsonHasKey(data, "source") {\n\t\tu.OfMemory = new(Memory)',
    );
    expect(services).toContain("\tGroupBy []UsageDimension\n");
    const models = file("go/models_gen.go");
    expect(models).toContain('\tAgent AgentDraft `json:"agent"`');
  });
});
