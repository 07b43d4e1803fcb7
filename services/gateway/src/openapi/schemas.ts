import { z } from "zod";
import type { ServedProviders } from "../providers.js";
import {
  Agent,
  AgentDeleted,
  AgentDeletedResponse,
  AgentListResponse,
  AgentResponse,
  AgentWriteResponse,
  GenerationSettings,
  narrowToDeployment,
} from "../routes/agents.schemas.js";
import { ApiKey, ApiKeyCreated, ApiKeyRevoked } from "../routes/api-keys.schemas.js";
import { BudgetThresholdData, registerBudgetSchemas } from "../routes/budgets.schemas.js";
import { narrowCharacterFile, registerCharacterSchemas } from "../routes/characters.schemas.js";
import { ClientStatus } from "../routes/clients.schemas.js";
import {
  CursorPagination,
  cursorList,
  ErrorResponse,
  FieldIssue,
  Health,
  Pagination,
  Readiness,
  success,
} from "../routes/common.schemas.js";
import type { Component } from "../routes/define.js";
import { registerDocumentSchemas } from "../routes/documents.schemas.js";
import {
  Conversation,
  ConversationDeleted,
  HistoryMessage,
  messageByIdResponse,
  UserErased,
} from "../routes/history.schemas.js";
import { registerMemberSchemas } from "../routes/members.schemas.js";
import { registerMemorySchemas } from "../routes/memories.schemas.js";
import {
  BackgroundMessage,
  BackgroundMessageAccepted,
  backgroundStates,
  Citation,
  MessageDelta,
  MessageResponse,
  MessageStarted,
  PendingToolCall,
  Reply,
  StreamError,
  streamEventSchemas,
  ToolApprovalRequired,
  ToolCall,
  ToolCallStarted,
} from "../routes/messages.schemas.js";
import { Plugin, Secret, SecretDeleted } from "../routes/plugins.schemas.js";
import { registerScheduleSchemas } from "../routes/schedules.schemas.js";
import { UsageGroup, UsageReport } from "../routes/usage.schemas.js";
import {
  AgentDeletedData,
  Delivery,
  MessageFailedData,
  MessageRequiresActionData,
  Webhook,
  WebhookCreated,
  WebhookDeleted,
  WebhookTestData,
  webhookEventSchemas,
} from "../routes/webhooks.schemas.js";
import { createAgentBody, listAgentsQuery, updateAgentBody } from "../validation/agents.js";
import { createApiKeyBody } from "../validation/api-keys.js";
import { sendMessageBody } from "../validation/messages.js";
import { putSecretBody } from "../validation/plugins.js";
import { createWebhookBody, updateWebhookBody } from "../validation/webhooks.js";
import {
  type ComponentRegistry,
  componentRegistry,
  convertRegistry,
  convertSchema,
  JSON_VALUE_SCHEMA_ID,
  type JsonSchema,
  jsonValueSchema,
} from "./convert.js";

/*
 * The named schemas of the document (`components.schemas`), gathered from each resource's schemas
 * (routes/<resource>.schemas.ts). Request bodies are the gateway's own validation schemas; responses are
 * described beside the routes that answer them.
 */

export { STREAM_EVENT_SCHEMA_ID } from "../routes/messages.schemas.js";
export { WEBHOOK_EVENTS } from "../routes/webhooks.schemas.js";

/**
 * Every named schema of the document. With `served`, the agent requests are this deployment's (which providers
 * and models it serves); without, they list every provider the product has.
 */
export function componentSchemas(
  served?: ServedProviders,
  declared: { requests: Component[]; responses: Component[] } = { requests: [], responses: [] },
): Record<string, JsonSchema> {
  const requests = componentRegistry();
  requests.add(createAgentBody, { id: "CreateAgentRequest" });
  requests.add(updateAgentBody, { id: "UpdateAgentRequest" });
  requests.add(sendMessageBody, { id: "SendMessageRequest" });
  requests.add(createApiKeyBody, { id: "CreateApiKeyRequest" });
  requests.add(createWebhookBody, { id: "CreateWebhookRequest" });
  requests.add(updateWebhookBody, { id: "UpdateWebhookRequest" });
  requests.add(putSecretBody, { id: "PutSecretRequest" });

  const responses: ComponentRegistry = componentRegistry();
  const named: [string, z.ZodType][] = [
    ["Agent", Agent],
    ["Pagination", Pagination],
    ["AgentResponse", AgentResponse],
    ["AgentWriteResponse", AgentWriteResponse],
    ["AgentListResponse", AgentListResponse],
    ["AgentDeleted", AgentDeleted],
    ["AgentDeletedResponse", AgentDeletedResponse],
    ["Reply", Reply],
    ["MessageResponse", MessageResponse],
    ["MessageStarted", MessageStarted],
    ["MessageDelta", MessageDelta],
    ["ToolCallStarted", ToolCallStarted],
    ["ToolCall", ToolCall],
    ["Citation", Citation],
    ["PendingToolCall", PendingToolCall],
    ["ToolApprovalRequired", ToolApprovalRequired],
    ["StreamError", StreamError],
    ["HistoryMessage", HistoryMessage],
    ["Conversation", Conversation],
    ["CursorPagination", CursorPagination],
    ["BackgroundMessageAccepted", BackgroundMessageAccepted],
    ["BackgroundMessageAcceptedResponse", success(BackgroundMessageAccepted)],
    ["BackgroundMessage", BackgroundMessage],
    ["BackgroundMessageResponse", success(BackgroundMessage)],
    ["MessageByIdResponse", messageByIdResponse()],
    ["HistoryMessageListResponse", cursorList(HistoryMessage)],
    ["ConversationListResponse", cursorList(Conversation)],
    ["ConversationDeleted", ConversationDeleted],
    ["ConversationDeletedResponse", success(ConversationDeleted)],
    ["UserErased", UserErased],
    ["UsageGroup", UsageGroup],
    ["UsageReport", UsageReport],
    ["UsageResponse", success(UsageReport)],
    ["UserErasedResponse", success(UserErased)],
    ["Webhook", Webhook],
    ["WebhookResponse", success(Webhook)],
    ["WebhookCreatedResponse", success(WebhookCreated)],
    ["WebhookListResponse", success(z.array(Webhook))],
    ["WebhookDeletedResponse", success(WebhookDeleted)],
    ["Delivery", Delivery],
    ["DeliveryResponse", success(Delivery)],
    ["DeliveryListResponse", cursorList(Delivery)],
    ["AgentDeletedData", AgentDeletedData],
    ["MessageFailedData", MessageFailedData],
    ["MessageRequiresActionData", MessageRequiresActionData],
    ["WebhookTestData", WebhookTestData],
    ["BudgetThresholdData", BudgetThresholdData],
    ["ApiKey", ApiKey],
    ["ApiKeyResponse", success(ApiKeyCreated)],
    ["ApiKeyListResponse", success(z.array(ApiKey))],
    ["ApiKeyRevokedResponse", success(ApiKeyRevoked)],
    ["Plugin", Plugin],
    ["PluginListResponse", success(z.array(Plugin))],
    ["Secret", Secret],
    ["SecretResponse", success(Secret)],
    ["SecretListResponse", success(z.array(Secret))],
    ["SecretDeletedResponse", success(SecretDeleted)],
    ["ClientStatus", ClientStatus],
    ["ClientStatusListResponse", success(z.array(ClientStatus))],
    ["FieldIssue", FieldIssue],
    ["ErrorResponse", ErrorResponse],
    ["Health", Health],
    ["Readiness", Readiness],
  ];
  named.push(...webhookEventSchemas(new Map(named)));
  for (const [name, schema] of named) responses.add(schema, { id: name });
  registerCharacterSchemas(requests, responses, Agent, FieldIssue);
  registerMemorySchemas(requests, responses, { success, cursorList });
  registerDocumentSchemas(requests, responses, { success, cursorList });
  registerScheduleSchemas(responses);
  registerMemberSchemas(requests, responses);
  registerBudgetSchemas(requests, responses);
  // Those routes declare themselves (`component`, a body's `schema`) come after, unless already named here.
  for (const { id, schema } of declared.requests) if (!requests.has(schema)) requests.add(schema, { id });
  for (const { id, schema } of declared.responses) if (!responses.has(schema)) responses.add(schema, { id });

  const input = convertRegistry(requests, "input");
  input[JSON_VALUE_SCHEMA_ID] = jsonValueSchema();
  // The refinement of sendMessageBody, which the conversion cannot state: not both background and stream.
  input.SendMessageRequest!.not = {
    required: ["background", "stream"],
    properties: { background: { const: true }, stream: { const: true } },
  };
  const settings = convertSchema(GenerationSettings, "input");
  for (const request of ["CreateAgentRequest", "UpdateAgentRequest"]) {
    const properties = input[request]!.properties as Record<string, JsonSchema>;
    properties.settings = { ...properties.settings, properties: settings.properties };
  }
  if (served) {
    narrowToDeployment(input, served);
    narrowCharacterFile(input.CharacterFile!, served);
  }
  const output = { ...convertRegistry(responses, "output"), ...streamEventSchemas() };
  output.BackgroundMessage!.allOf = backgroundStates(output.Reply!);
  for (const id of Object.keys(input)) {
    if (id in output) throw new Error(`schema id ${id} is both a request and a response`);
  }
  return { ...input, ...output };
}

/** The query parameters of a list, one JSON Schema each from its validation schema, and which are required. */
export function queryParameters(
  schema: z.ZodType = listAgentsQuery,
): { name: string; schema: JsonSchema; required: boolean }[] {
  const query = convertSchema(schema, "input");
  const required = new Set((query.required as string[] | undefined) ?? []);
  return Object.entries(query.properties as Record<string, JsonSchema>).map(([name, schema]) => ({
    name,
    schema,
    required: required.has(name),
  }));
}
