import { MESSAGE_BOUNDS } from "@agentry/core";
import type { JsonSchema } from "../../openapi/convert.js";
import { CHAT_COMPLETIONS_PATH, MODELS_PATH } from "./wire.js";

/*
 * The OpenAPI description of the OpenAI-compatible routes: self-contained (inline schemas, no shared components),
 * left out of this API's SDKs (`x-sdk-exclude`), since OpenAI's own SDKs are their clients.
 */

const TAG = "Standard clients";
const GUIDE = "docs/api/standard-clients.md";

const usage: JsonSchema = {
  type: "object",
  required: ["prompt_tokens", "completion_tokens", "total_tokens"],
  properties: {
    prompt_tokens: { type: "integer", minimum: 0 },
    completion_tokens: { type: "integer", minimum: 0 },
    total_tokens: { type: "integer", minimum: 0 },
  },
};

const finishReason: JsonSchema = { type: "string", enum: ["stop", "length", "content_filter"] };

const model: JsonSchema = {
  type: "object",
  description: "An agent, as OpenAI's model object: `id` is what `model` names in a chat completion.",
  required: ["id", "object", "created", "owned_by"],
  properties: {
    id: { type: "string", description: "The agent's id.", examples: ["agt_01HZY3M8Q4R5S6T7V8W9X0Y1Z2"] },
    object: { const: "model" },
    created: { type: "integer", description: "When the agent was created, in Unix seconds." },
    owned_by: { type: "string", description: "The account's id." },
  },
};

const message: JsonSchema = {
  type: "object",
  required: ["role"],
  properties: {
    role: {
      type: "string",
      enum: ["system", "developer", "user", "assistant"],
      description:
        "`system` and `developer` messages are added after the agent's own system prompt; `user` and `assistant` messages are the conversation. `tool` messages are refused.",
    },
    content: {
      description: "The text, or text parts (`{type: 'text', text}`); other parts are refused.",
      oneOf: [
        { type: "string" },
        {
          type: "array",
          items: {
            type: "object",
            required: ["type", "text"],
            properties: { type: { const: "text" }, text: { type: "string" } },
          },
        },
        { type: "null" },
      ],
    },
    name: { type: "string" },
  },
};

const requestBody: JsonSchema = {
  type: "object",
  required: ["model", "messages"],
  description:
    "OpenAI's chat completion request. Fields not listed (sampling, `max_tokens`, `response_format`, …) are accepted and ignored: the agent's own settings decide them.",
  properties: {
    model: {
      type: "string",
      minLength: 1,
      description: "The agent's id (`GET /v1/models` lists them); any other value is answered `404`.",
    },
    messages: {
      type: "array",
      minItems: 1,
      items: message,
      description:
        "The whole context of the turn, ending with a `user` message (the turn's text). Nothing stored server-side is added.",
    },
    stream: { type: ["boolean", "null"], description: "`true` answers `chat.completion.chunk` events." },
    stream_options: {
      type: ["object", "null"],
      properties: {
        include_usage: {
          type: ["boolean", "null"],
          description: "Adds a last chunk with `usage` and no choices; every other chunk has `usage: null`.",
        },
      },
    },
    user: {
      type: "string",
      minLength: 1,
      maxLength: MESSAGE_BOUNDS.idMaxLength,
      description: "The turn's `userId` in history and usage.",
    },
    n: {
      type: ["integer", "null"],
      enum: [1, null],
      description: "Only 1: an agent gives one reply per turn.",
    },
    tools: {
      type: ["array", "null"],
      maxItems: 0,
      description: "Refused (400): the agent uses its own plugins' tools.",
    },
  },
};

const citations: JsonSchema = {
  type: "array",
  description:
    "The chunks of the agent's documents the prompt carried, as `citations` of `POST /v1/agents/{agentId}/messages` (not part of OpenAI's shape). Absent when there are none.",
  items: {
    type: "object",
    required: ["documentId", "chunk", "score"],
    properties: {
      documentId: { type: "string" },
      chunk: { type: "integer", minimum: 0 },
      score: { type: "number" },
    },
  },
};

const completion: JsonSchema = {
  type: "object",
  required: ["id", "object", "created", "model", "choices", "usage"],
  properties: {
    id: { type: "string", description: "The reply's id, as history lists it." },
    object: { const: "chat.completion" },
    created: { type: "integer", description: "Unix seconds." },
    model: { type: "string", description: "The agent's id." },
    system_fingerprint: { type: "null" },
    choices: {
      type: "array",
      minItems: 1,
      maxItems: 1,
      items: {
        type: "object",
        required: ["index", "message", "finish_reason"],
        properties: {
          index: { const: 0 },
          message: {
            type: "object",
            required: ["role", "content"],
            properties: {
              role: { const: "assistant" },
              content: { type: "string" },
              refusal: { type: "null" },
            },
          },
          logprobs: { type: "null" },
          finish_reason: finishReason,
        },
      },
    },
    usage,
    citations,
  },
};

const chunk: JsonSchema = {
  type: "object",
  description:
    'One `data:` event of the stream; the stream ends with `data: [DONE]`. A failure after the stream has started is one `data: {"error": …}` event instead.',
  required: ["id", "object", "created", "model", "choices"],
  properties: {
    id: { type: "string" },
    object: { const: "chat.completion.chunk" },
    created: { type: "integer" },
    model: { type: "string" },
    system_fingerprint: { type: "null" },
    choices: {
      type: "array",
      maxItems: 1,
      items: {
        type: "object",
        required: ["index", "delta", "finish_reason"],
        properties: {
          index: { const: 0 },
          delta: {
            type: "object",
            properties: { role: { const: "assistant" }, content: { type: "string" } },
          },
          logprobs: { type: "null" },
          finish_reason: { oneOf: [finishReason, { type: "null" }] },
        },
      },
    },
    usage: { oneOf: [usage, { type: "null" }] },
    citations: { ...citations, description: "On the chunk that carries `finish_reason` only." },
  },
};

const error = (description: string): JsonSchema => ({
  description,
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: ["error"],
        properties: {
          error: {
            type: "object",
            required: ["message", "type", "code", "param"],
            properties: {
              message: { type: "string" },
              type: {
                type: "string",
                enum: [
                  "invalid_request_error",
                  "authentication_error",
                  "permission_error",
                  "not_found_error",
                  "rate_limit_error",
                  "server_error",
                ],
              },
              code: {
                type: "string",
                description: "This API's error code (docs/api/errors-and-status-codes.md).",
              },
              param: { type: ["string", "null"] },
            },
          },
        },
      },
    },
  },
});

const errors = (extra: Record<string, JsonSchema>): Record<string, JsonSchema> => ({
  "401": error("No API key, or one that is not valid (`authentication_error`)."),
  "403": error("The key lacks the operation's scope (`permission_error`)."),
  ...extra,
  "429": {
    ...error("A rate or concurrency limit is spent (`rate_limit_error`); retry after `Retry-After` seconds."),
    headers: { "Retry-After": { schema: { type: "integer" } } },
  },
});

const common = (scope: string, limits: string[]) => ({
  tags: [TAG],
  security: [{ bearerAuth: [scope] }],
  "x-scopes": [scope],
  "x-rate-limits": ["requestsPerMinute", ...limits],
  "x-sdk-exclude": true,
  parameters: [{ $ref: "#/components/parameters/X-Request-Id" }],
});

/** The paths of the OpenAI-compatible routes, merged into the document's `paths`. */
export function openAiOperations(): Record<string, Record<string, JsonSchema>> {
  return {
    [CHAT_COMPLETIONS_PATH]: {
      post: {
        operationId: "createChatCompletion",
        summary: "Talk to an agent through OpenAI's Chat Completions API",
        description: `OpenAI's chat completion, answered by the agent that \`model\` names, for OpenAI's SDKs and any tool that takes an OpenAI base URL (\`<origin>/v1\`). The request's messages are the whole context after the agent's own system prompt. The turn is recorded in history and usage as a message is (room \`openai\`, user \`user\`) and spends the agent's message bucket and concurrency slots. Errors are in OpenAI's shape. See ${GUIDE}.`,
        ...common("messages:send", ["messagesPerMinute", "concurrentMessages"]),
        parameters: [
          { $ref: "#/components/parameters/X-Request-Id" },
          { $ref: "#/components/parameters/Idempotency-Key" },
        ],
        requestBody: { required: true, content: { "application/json": { schema: requestBody } } },
        responses: {
          "200": {
            description:
              "The reply, as a `chat.completion` object, or with `stream: true` as server-sent events.",
            content: {
              "application/json": { schema: completion },
              "text/event-stream": {
                schema: { type: "string", description: "`data: <chunk JSON>` events, then `data: [DONE]`." },
                "x-event-data": chunk,
              },
            },
          },
          ...errors({
            "400": error(
              "The body is not a valid request, asks for tools or `n` > 1, or does not end with a user message; or the `Idempotency-Key` is malformed.",
            ),
            "404": error("`model` is not an agent of this account."),
            "409": {
              ...error(
                "The agent is inactive (`AGENT_INACTIVE`), or a request with this `Idempotency-Key` is still running (`IDEMPOTENCY_KEY_IN_USE`; retry after `Retry-After` seconds).",
              ),
              headers: { "Retry-After": { schema: { type: "integer" } } },
            },
            "413": error("The body is over 1 MiB."),
            "415": error("The body is not JSON."),
            "422": error(
              "This `Idempotency-Key` was used with a different request (`IDEMPOTENCY_KEY_REUSED`).",
            ),
          }),
          "502": error("The agent's model provider failed."),
          "503": error("A service the turn needs is unavailable; retry after `Retry-After` seconds."),
          "500": error("An internal error; the message names the request id."),
        },
      },
    },
    [MODELS_PATH]: {
      get: {
        operationId: "listModels",
        summary: "List the account's active agents as OpenAI models",
        description: `OpenAI's model list: the account's active agents, all of them. See ${GUIDE}.`,
        ...common("agents:read", ["listPerMinute"]),
        responses: {
          "200": {
            description: "The agents.",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["object", "data"],
                  properties: { object: { const: "list" }, data: { type: "array", items: model } },
                },
              },
            },
          },
          ...errors({}),
        },
      },
    },
    [`${MODELS_PATH}/{model}`]: {
      get: {
        operationId: "retrieveModel",
        summary: "Read an agent as an OpenAI model",
        description: `OpenAI's model object of one agent of the account. See ${GUIDE}.`,
        ...common("agents:read", ["getPerMinute"]),
        parameters: [
          {
            name: "model",
            in: "path",
            required: true,
            description: "The agent's id.",
            schema: { type: "string" },
          },
          { $ref: "#/components/parameters/X-Request-Id" },
        ],
        responses: {
          "200": { description: "The agent.", content: { "application/json": { schema: model } } },
          ...errors({ "404": error("No agent of this account has this id.") }),
        },
      },
    },
  };
}
