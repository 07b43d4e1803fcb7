import {
  AGENT_BOUNDS,
  API_KEY_PREFIX,
  FALLBACK_MAX_ITEMS,
  FINISH_REASONS,
  GENERATION_BOUNDS,
  PROVIDER_NAMES,
  SCOPES,
  TOOL_CHOICES,
} from "@agentry/core";
import { ERROR_CODES } from "@agentry/errors";
import { PUBLISHED_EVENT_TYPES, TEST_EVENT_TYPE } from "@agentry/events";
import { z } from "zod";
import type { ServedProviders } from "../providers.js";
import { type AgentStatusName, STATUS_VALUES } from "../routes/present.js";
import { createAgentBody, listAgentsQuery, updateAgentBody } from "../validation/agents.js";
import { createApiKeyBody } from "../validation/api-keys.js";
import { HISTORY_PAGE } from "../validation/history.js";
import { sendMessageBody } from "../validation/messages.js";
import { putSecretBody } from "../validation/plugins.js";
import { NOT_BLANK_PATTERN, TRIMMED_SPACE } from "../validation/text.js";
import { createWebhookBody, SUBSCRIBABLE, updateWebhookBody } from "../validation/webhooks.js";
import { narrowCharacterFile, registerCharacterSchemas } from "./characters.js";
import {
  type ComponentRegistry,
  componentRegistry,
  convertRegistry,
  convertSchema,
  JSON_VALUE_SCHEMA_ID,
  type JsonSchema,
  jsonValueSchema,
  schemaRef,
} from "./convert.js";
import { registerMemorySchemas } from "./memories.js";

/*
 * The response bodies of the REST API (docs/api/errors-and-status-codes.md, "Envelope"; docs/api/agents.md,
 * "Record"; docs/api/messages-and-streams.md, "Reply"). Request bodies
 * are the gateway's own validation schemas; the agent record reuses their field schemas, so a bound changes in
 * one place.
 */

const EXAMPLE_ULID = "01JCZ3S8Q5M2T7V9X0B4D6F8H1";

const id = (prefix: string, what: string) =>
  z.string().meta({
    description: `${what}: \`${prefix}_\` and a ULID. Treat it as opaque.`,
    examples: [`${prefix}_${EXAMPLE_ULID}`],
  });

const timestamp = (description: string) =>
  z.iso.datetime().meta({ description, examples: ["2026-11-20T09:30:00.000Z"] });

const nullableTimestamp = (description: string) =>
  z.iso
    .datetime()
    .meta({ examples: ["2026-11-20T09:30:00.000Z"] })
    .nullable()
    .meta({ description });

const AGENT_STATUSES = Object.keys(STATUS_VALUES) as [AgentStatusName, ...AgentStatusName[]];

/** Generation settings inside `settings`, validated when an agent is written (see `generationSettingsIssues`). */
export const GenerationSettings = z
  .looseObject({
    temperature: z
      .number()
      .min(GENERATION_BOUNDS.temperature.min)
      .max(GENERATION_BOUNDS.temperature.max)
      .nullable()
      .optional()
      .meta({
        description: `Sampling temperature, ${GENERATION_BOUNDS.temperature.min} to ${GENERATION_BOUNDS.temperature.max}. Unset or \`null\`: the provider's default.`,
      }),
    maxTokens: z
      .number()
      .int()
      .min(GENERATION_BOUNDS.maxTokens.min)
      .max(GENERATION_BOUNDS.maxTokens.max)
      .nullable()
      .optional()
      .meta({
        description: `The most tokens a reply may have, ${GENERATION_BOUNDS.maxTokens.min} to ${GENERATION_BOUNDS.maxTokens.max}. Unset or \`null\`: ${GENERATION_BOUNDS.maxTokens.default}, or the deployment's \`LOCAL_MAX_TOKENS\` (128 by default) on the \`local\` provider.`,
      }),
    maxToolSteps: z
      .number()
      .int()
      .min(GENERATION_BOUNDS.maxToolSteps.min)
      .max(GENERATION_BOUNDS.maxToolSteps.max)
      .nullable()
      .optional()
      .meta({
        description: `The most rounds of tool calls in one turn, ${GENERATION_BOUNDS.maxToolSteps.min} to ${GENERATION_BOUNDS.maxToolSteps.max} (0 offers the model no tools). After the last round the model answers without tools, so the turn ends in text. Unset or \`null\`: ${GENERATION_BOUNDS.maxToolSteps.default}.`,
      }),
    toolChoice: z.enum(TOOL_CHOICES).nullable().optional().meta({
      description:
        "`required`: the model must call one of the agent's tools in the turn's first round (OpenAI's `tool_choice: required`, Anthropic's `tool_choice: any`, and for the local model a call its grammar forces); later rounds are `auto`. `auto`: the model decides. Has no effect when the agent offers no tools. Unset or `null`: `auto`.",
    }),
    fallbacks: z
      .array(
        z.strictObject({
          modelProvider: z.enum(PROVIDER_NAMES).meta({
            description:
              "A provider, as for the agent's own `modelProvider`. One with no configuration here is accepted; when tried, it fails as `MODEL_ERROR` and the next fallback is tried.",
          }),
          model: z
            .string()
            .max(AGENT_BOUNDS.modelMaxLength)
            .regex(new RegExp(NOT_BLANK_PATTERN))
            .nullable()
            .optional()
            .meta({
              description: "The model, as the provider names it. Unset or `null`: the provider's default.",
            }),
        }),
      )
      .max(FALLBACK_MAX_ITEMS)
      .nullable()
      .optional()
      .meta({
        description: `Up to ${FALLBACK_MAX_ITEMS} models to answer with, in order, when the agent's own fails with a 503-class error (or a fallback fails with 502 or 503); the reply's \`modelProvider\` and \`model\` name the one that answered, and usage counts it. When every one fails, the agent's own failure is the answer. The agent's \`status\` reflects its own model only.`,
      }),
  })
  .meta({
    description:
      "Platform-specific configuration, as a JSON object. `temperature` and `maxTokens` tune generation, `fallbacks` names the models that answer when the agent's own cannot, `maxToolSteps` bounds the rounds of tool calls in a turn and `toolChoice` whether the first must call one; other keys are kept as given.",
  });

const spec = createAgentBody.shape;

const StatusReason = z
  .object({
    code: z.string().meta({ description: "The error code of the failure.", examples: ["MODEL_ERROR"] }),
    message: z.string(),
    at: timestamp("When the failure happened."),
  })
  .meta({
    description:
      "Why the agent is in `error`: the provider call that failed for a reason that will not fix itself. `null` otherwise.",
  });

export const Agent = z
  .object({
    id: id("agt", "The agent's id"),
    name: spec.name,
    bio: spec.bio.unwrap(),
    personality: spec.personality.unwrap(),
    knowledge: spec.knowledge.unwrap(),
    goals: spec.goals.unwrap(),
    clients: spec.clients.unwrap(),
    settings: GenerationSettings,
    modelProvider: spec.modelProvider.unwrap().nullable().meta({
      description: "The AI model provider; `null`: the server's default, resolved when a message is sent.",
    }),
    model: spec.model
      .unwrap()
      .nullable()
      .meta({ description: "The model to use; `null`: the provider's default." }),
    plugins: spec.plugins.unwrap(),
    status: z.enum(AGENT_STATUSES).meta({
      description:
        "`active` (new agents), `inactive` (refuses messages), or `error` (set by the service after a lasting provider failure; cleared by an update of `status`, `modelProvider`, `model` or `settings`, or by the next successful message).",
    }),
    statusReason: StatusReason.nullable(),
    createdAt: timestamp("When the agent was created."),
    updatedAt: timestamp("When the agent was last changed."),
    apiEndpoint: z.url().meta({
      description: "Absolute URL of the agent's messages endpoint.",
      examples: [`https://api.example.com/v1/agents/agt_${EXAMPLE_ULID}/messages`],
    }),
  })
  .meta({ description: "An agent, as Get, List, Create and Update return it." });

const Pagination = z
  .object({
    page: z.number().int().min(1).meta({ description: "This page's number." }),
    limit: z.number().int().min(1).meta({ description: "Page size asked for." }),
    total: z.number().int().min(0).meta({ description: "Agents matching the filter, on all pages." }),
    totalPages: z.number().int().min(0),
    hasMore: z.boolean().meta({ description: "Whether a page after this one exists." }),
  })
  .meta({ description: "Where a page of a list is." });

const success = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

const AgentResponse = success(Agent);
const AgentListResponse = z.object({
  success: z.literal(true),
  data: z.array(Agent),
  pagination: Pagination,
});
const AgentDeleted = z.object({ id: id("agt", "The deleted agent's id"), deleted: z.literal(true) });
const AgentDeletedResponse = success(AgentDeleted);

const Usage = z.object({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  totalTokens: z.number().int().min(0).meta({ description: "`inputTokens + outputTokens`." }),
});

const conversationEcho = (what: string) =>
  z
    .string()
    .nullable()
    .meta({ description: `The request's \`${what}\`, echoed; \`null\` when it carried none.` });

const toolCallFields = {
  id: z.string().meta({ description: "The call's id, as the model provider gave it." }),
  name: z.string().meta({ description: "The tool as the model called it: `<plugin>__<tool>`." }),
  arguments: z.json().meta({
    description:
      "The arguments the model gave, as JSON; text the model wrote that is not JSON stays a string.",
  }),
};

export const ToolCallStarted = z
  .object(toolCallFields)
  .meta({ description: "Data of `tool.call`: the model called a tool of the agent's plugins; it runs now." });

export const ToolCall = z
  .object({
    ...toolCallFields,
    ok: z.boolean().meta({
      description: "Whether the tool answered; `false` when it failed, timed out or did not exist.",
    }),
    output: z.json().optional().meta({ description: "The tool's answer, when `ok`." }),
    error: z.string().optional().meta({
      description:
        "Why the call failed, when not `ok`: what the model was told (it then answers without it).",
    }),
  })
  .meta({
    description:
      "One tool call the model made during the turn, with its outcome; the data of `tool.result` and an item of a reply's `toolCalls`.",
  });

const toolCalls = z.array(ToolCall).optional().meta({
  description:
    "The tools of the agent's plugins the model called during the turn, in order, with their outcomes; absent when it called none.",
});

export const Reply = z
  .object({
    id: id("msg", "The reply's id"),
    agentId: id("agt", "The agent that answered"),
    userId: conversationEcho("userId"),
    roomId: conversationEcho("roomId"),
    text: z.string().meta({ description: "The reply text." }),
    model: z.string().meta({ description: "The model that answered, as the provider names it." }),
    modelProvider: z.enum(PROVIDER_NAMES).meta({ description: "The provider that answered." }),
    finishReason: z.enum(FINISH_REASONS).meta({
      description:
        "Why generation stopped: `stop` (natural end), `length` (cut short: `maxTokens` reached or, on the `local` provider, its reply time limit or a loop of repeated text), `content_filter` (the provider withheld content) or `other`.",
    }),
    usage: Usage.meta({ description: "Tokens used, as the provider reported them; zeros when it did not." }),
    latencyMs: z
      .number()
      .int()
      .min(0)
      .meta({ description: "Milliseconds from receipt to the complete reply." }),
    createdAt: timestamp("When the reply was complete."),
    toolCalls,
  })
  .meta({ description: "The agent's complete reply to one message." });

const MessageResponse = success(Reply);

const BackgroundMessageAccepted = z
  .object({
    id: id("msg", "The id the reply will carry: read it at `GET /v1/agents/{agentId}/messages/{id}`"),
    status: z.literal("pending").meta({ description: "Always `pending`: the reply is being generated." }),
  })
  .meta({
    description: "A background message, accepted: its reply is generated whatever happens to the caller.",
  });

const ErrorSummary = z
  .object({
    code: z.enum(ERROR_CODES).meta({ description: "An error code, as in the error envelope." }),
    message: z.string().meta({ description: "What went wrong, for a person." }),
  })
  .meta({ description: "Why a background message got no reply." });

/** The fields a background message has in every state; the other fields of `Reply` only once completed. */
const BACKGROUND_IDS = ["id", "agentId", "userId", "roomId"];

/**
 * A background message as `GET .../messages/{messageId}` answers it while its events are kept: the reply object
 * with `status`; only the ids while pending, the whole reply once completed, the error once failed.
 */
export const BackgroundMessage = z
  .object({
    id: id("msg", "The reply's id"),
    agentId: id("agt", "The agent that answers"),
    userId: conversationEcho("userId"),
    roomId: conversationEcho("roomId"),
    status: z.enum(["pending", "completed", "failed"]).meta({
      description:
        "`pending`: the reply is being generated (only the ids are known); `completed`: every field of the reply is here; `failed`: see `error`.",
    }),
    ...Object.fromEntries(
      Object.entries(Reply.shape)
        .filter(([name]) => !BACKGROUND_IDS.includes(name))
        .map(([name, schema]) => [name, (schema as z.ZodType).optional()]),
    ),
    error: ErrorSummary.optional().meta({ description: "Why it failed; `failed` only." }),
  })
  .meta({
    description:
      "A message sent with `background: true`: the reply object with `status` added. One object with optional fields rather than a union of three: `pending` has only `id`, `agentId`, `userId`, `roomId` and `status`; `completed` has every field of `Reply` as well; `failed` has the ids and `error`. A completed one is answered so for as long as its reply is stored; a failed one for 24 hours after it ended (or `STREAM_RETENTION`, if longer).",
  });

/**
 * What BackgroundMessage's description says of each `status`, as JSON Schema's if/then (which the conversion
 * cannot state), so that a validator holds every answer to it. `reply` is the converted `Reply`.
 */
function backgroundStates(reply: JsonSchema): JsonSchema[] {
  const replyOnly = Object.keys(reply.properties as object).filter(
    (field) => !BACKGROUND_IDS.includes(field),
  );
  const required = (reply.required as string[]).filter((field) => replyOnly.includes(field));
  // `false`: the field is absent; `true`: it may be present, as `properties` describes it.
  const fields = (present: boolean) => Object.fromEntries(replyOnly.map((field) => [field, present]));
  const when = (status: string, then: JsonSchema) => ({
    if: { properties: { status: { const: status } }, required: ["status"] },
    then,
  });
  return [
    when("pending", { properties: { ...fields(false), error: false } }),
    when("completed", { properties: { ...fields(true), error: false }, required }),
    when("failed", { properties: { ...fields(false), error: true }, required: ["error"] }),
  ];
}

/**
 * `GET .../messages/{messageId}`: a stored message, or a background message while its events are kept. Exactly
 * one matches any answer: a stored message has `role` and `conversationId` and no `status`; a background message
 * has `status` and neither of the others.
 */
function messageByIdResponse() {
  return success(z.xor([HistoryMessage, BackgroundMessage])).meta({
    description:
      "A stored message (`HistoryMessage`), or, for a message sent with `background: true` while its events are kept, a `BackgroundMessage` (it has `status`; a stored message has `role` instead).",
  });
}

export const MessageStarted = z
  .object({
    id: id("msg", "The id the completed reply will carry"),
    agentId: id("agt", "The agent that answers"),
    userId: conversationEcho("userId"),
    roomId: conversationEcho("roomId"),
  })
  .meta({ description: "Data of `message.started`: the provider accepted the message; the reply follows." });

export const MessageDelta = z
  .object({ text: z.string().meta({ description: "Text to append to the reply; never empty." }) })
  .meta({ description: "Data of `message.delta`: the next piece of the reply's text." });

export const StreamError = z
  .object({
    code: z.enum(ERROR_CODES).meta({ description: "An error code, as in the error envelope." }),
    message: z.string(),
  })
  .meta({ description: "Data of `error`: the stream failed after it started; no reply was stored." });

/** The server-sent events of a streamed reply, by name, with whether each ends the stream. */
export const STREAM_EVENTS = [
  {
    event: "message.started",
    eventSchemaId: "MessageStartedEvent",
    dataSchemaId: "MessageStarted",
    terminal: false,
    description: "First event: the provider accepted the message.",
  },
  {
    event: "message.delta",
    eventSchemaId: "MessageDeltaEvent",
    dataSchemaId: "MessageDelta",
    terminal: false,
    description: "The next piece of the reply's text; the pieces joined are the reply's text.",
  },
  {
    event: "tool.call",
    eventSchemaId: "ToolCallEvent",
    dataSchemaId: "ToolCallStarted",
    terminal: false,
    description: "The model called a tool; its `tool.result` follows (calls made together run concurrently).",
  },
  {
    event: "tool.result",
    eventSchemaId: "ToolResultEvent",
    dataSchemaId: "ToolCall",
    terminal: false,
    description: "A tool call's outcome, given to the model, which then goes on answering.",
  },
  {
    event: "message.completed",
    eventSchemaId: "MessageCompletedEvent",
    dataSchemaId: "Reply",
    terminal: true,
    description: "The complete reply, the same object as the non-stream response's `data`. Ends the stream.",
  },
  {
    event: "error",
    eventSchemaId: "StreamErrorEvent",
    dataSchemaId: "StreamError",
    terminal: true,
    description: "The reply failed after the stream started. Ends the stream.",
  },
] as const;

export const STREAM_EVENT_SCHEMA_ID = "MessageStreamEvent";

/**
 * One server-sent event as the SSE format defines its fields, in the shape OpenAPI 3.2 gives an `itemSchema`: an
 * object with `id`, `event` and `data`, where `data` is the text after `data:`, JSON whose schema
 * `contentSchema` gives. OpenAPI 3.1 tooling (schemathesis among them) reads the `schema` of a
 * `text/event-stream` response as this per-event schema; `x-terminal` marks the events that end the stream.
 */
function streamEventSchemas(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const event of STREAM_EVENTS) {
    out[event.eventSchemaId] = {
      type: "object",
      description: event.description,
      properties: {
        id: {
          type: "string",
          pattern: "^[1-9][0-9]*$",
          description: "The `id:` field: the event's sequence number in the stream, from 1.",
        },
        event: { const: event.event, description: "The `event:` field." },
        data: {
          type: "string",
          contentMediaType: "application/json",
          contentSchema: schemaRef(event.dataSchemaId),
          description: `The \`data:\` field: JSON, a \`${event.dataSchemaId}\`.`,
        },
      },
      required: ["id", "event", "data"],
      "x-terminal": event.terminal,
    };
  }
  out[STREAM_EVENT_SCHEMA_ID] = {
    description:
      "One server-sent event of a streamed reply: `message.started`, any number of `message.delta`, `tool.call` and `tool.result`, then exactly one of `message.completed` or `error` (`x-terminal`), after which the stream closes.",
    oneOf: STREAM_EVENTS.map((event) => schemaRef(event.eventSchemaId)),
    discriminator: {
      propertyName: "event",
      mapping: Object.fromEntries(
        STREAM_EVENTS.map((event) => [event.event, `#/components/schemas/${event.eventSchemaId}`]),
      ),
    },
  };
  return out;
}

const storedConversationPart = (what: string) =>
  z
    .string()
    .nullable()
    .meta({ description: `The conversation's \`${what}\`; \`null\` for messages sent without one.` });

const assistantOnly = "Assistant messages only.";

/**
 * A stored message, either side of an exchange (docs/api/history.md, "Stored messages"). The fields of the call
 * behind a reply are present on assistant messages only, so they are optional here rather than a second schema.
 */
export const HistoryMessage = z
  .object({
    id: id("msg", "The message's id; an assistant message has the id its send call answered with"),
    agentId: id("agt", "The agent of the conversation"),
    conversationId: id("conv", "The conversation it belongs to"),
    userId: storedConversationPart("userId"),
    roomId: storedConversationPart("roomId"),
    role: z.enum(["user", "assistant"]).meta({
      description: "`user`: the message sent to the agent; `assistant`: the agent's reply.",
    }),
    text: z.string().meta({ description: "The text." }),
    model: z
      .string()
      .optional()
      .meta({ description: `The model that answered, as the provider names it. ${assistantOnly}` }),
    modelProvider: z
      .enum(PROVIDER_NAMES)
      .optional()
      .meta({ description: `The provider that answered. ${assistantOnly}` }),
    finishReason: z
      .enum(FINISH_REASONS)
      .nullable()
      .optional()
      .meta({
        description: `Why generation stopped, as in the send reply; \`null\` for replies stored before it was recorded. ${assistantOnly}`,
      }),
    usage: Usage.optional().meta({ description: `Tokens used by the call. ${assistantOnly}` }),
    latencyMs: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: `Milliseconds from receipt to the complete reply. ${assistantOnly}` }),
    createdAt: timestamp("When the message was received, or the reply was complete."),
    toolCalls: toolCalls.meta({
      description: `The tools the model called while writing the reply, with their outcomes, as in the send reply; absent when it called none. ${assistantOnly}`,
    }),
  })
  .meta({
    description:
      "A stored message: the one sent to the agent (`user`) or its reply (`assistant`, with the call's model, provider, finish reason, usage and latency). A message and its reply are stored together, once the reply is complete.",
  });

const Percentiles = z
  .object({
    p50: z.number().nullable().meta({ description: "The median, in ms; `null` without a completed send." }),
    p95: z
      .number()
      .nullable()
      .meta({ description: "The 95th percentile, in ms; `null` without a completed send." }),
  })
  .meta({ description: "Percentiles from mergeable sketches, with at most 1 % relative error." });

const usageFigures = {
  messages: z.number().int().min(0).meta({ description: "Every send, failed ones included." }),
  errors: z
    .number()
    .int()
    .min(0)
    .meta({ description: "Sends that ended in an error (any code; cancelled ones are not errors)." }),
  inputTokens: z.number().int().min(0).meta({ description: "Prompt tokens." }),
  outputTokens: z.number().int().min(0).meta({ description: "Reply tokens." }),
  totalTokens: z.number().int().min(0).meta({ description: "inputTokens + outputTokens." }),
  latencyMs: Percentiles.meta({ description: "From receipt to the complete reply, of completed sends." }),
  timeToFirstTokenMs: Percentiles.meta({
    description:
      "From receipt to the reply's first text (a reply not streamed: its arrival), of completed sends.",
  }),
};

const groupKey = (description: string) => z.string().nullable().optional().meta({ description });

export const UsageGroup = z
  .object({
    agentId: groupKey("The group's agent; present when grouping by `agentId`."),
    userId: groupKey(
      "The group's user id; present when grouping by `userId`; `null` for messages without one and for erased users.",
    ),
    model: groupKey("The group's model; present when grouping by `model`."),
    apiKeyId: groupKey("The group's API key; present when grouping by `apiKeyId`."),
    ...usageFigures,
  })
  .meta({ description: "One combination of the grouped dimensions, with its figures." });

export const UsageReport = z
  .object({
    from: timestamp("The start of the range, rounded down to the granularity."),
    to: timestamp("The end of the range, exclusive, rounded up to the granularity."),
    granularity: z.enum(["hour", "day"]).meta({ description: "The width of the buckets, in UTC." }),
    groupBy: z
      .array(z.enum(["agentId", "userId", "model", "apiKeyId"]))
      .optional()
      .meta({ description: "The dimensions asked for; absent without grouping." }),
    buckets: z
      .array(
        z.object({
          start: timestamp("The bucket's start, inclusive."),
          end: timestamp("The bucket's end, exclusive."),
          groups: z.array(UsageGroup).meta({
            description:
              "One group per combination seen in the bucket; without grouping, exactly one (zero-filled when nothing was sent).",
          }),
        }),
      )
      .meta({ description: "Every bucket of the range, oldest first, zero-filled." }),
    totals: z
      .object({
        ...usageFigures,
        groups: z
          .array(UsageGroup)
          .optional()
          .meta({ description: "The range's figures per group; present when grouping." }),
      })
      .meta({ description: "The figures of the whole range." }),
  })
  .meta({
    description:
      "Usage from hourly and daily rollups, recorded with each send: counts are exact, percentiles come from sketches.",
  });

export const Conversation = z
  .object({
    id: id("conv", "The conversation's id, stable for its life"),
    agentId: id("agt", "The agent"),
    userId: storedConversationPart("userId"),
    roomId: storedConversationPart("roomId"),
    messageCount: z.number().int().min(0).meta({ description: "Messages it holds, both roles." }),
    createdAt: timestamp("When its first message was stored."),
    lastMessageAt: timestamp("When its latest message was stored."),
  })
  .meta({
    description:
      "The history of one (agent, `userId`, `roomId`): messages sent without `userId` or `roomId` share the default one, whose `userId` and `roomId` are `null`.",
  });

const CursorPagination = z
  .object({
    limit: z.number().int().min(1).max(HISTORY_PAGE.maxLimit).meta({ description: "Page size asked for." }),
    hasMore: z.boolean().meta({
      description:
        "Whether more items lie beyond this page in the direction of paging: the next page is `before` (for `desc`) or `after` (for `asc`) this page's last item's id.",
    }),
  })
  .meta({ description: "Where a page of a cursor-paged list is." });

const cursorList = <T extends z.ZodType>(item: T) =>
  z.object({ success: z.literal(true), data: z.array(item), pagination: CursorPagination });

const ConversationDeleted = z.object({
  id: id("conv", "The deleted conversation's id"),
  deleted: z.literal(true),
  messagesDeleted: z.number().int().min(0).meta({ description: "Messages deleted with it." }),
});

const UserErased = z.object({
  userId: z.string().meta({ description: "The erased user id.", examples: ["user-42"] }),
  deleted: z.literal(true),
  messagesDeleted: z.number().int().min(0).meta({
    description:
      "Messages this call deleted, in every agent of the account; `0` when there were none left (erasing again, or a user with no messages).",
  }),
});

const apiKeyFields = {
  id: id("key", "The key's id"),
  name: z.string().meta({ description: "The key's label; empty when it has none." }),
  prefix: z.string().meta({
    description: "The first characters of the key, to recognise it.",
    examples: [`${API_KEY_PREFIX}a1B2c3`],
  }),
  scopes: z
    .array(z.enum(SCOPES))
    .meta({ description: "What the key may do: every scope it holds in this version." }),
  fullAccess: z.boolean().meta({
    description:
      "Whether the key was created without scopes: it holds every scope, including scopes added in later versions, which `scopes` then lists as well.",
  }),
  createdAt: nullableTimestamp("When the key was created."),
  lastUsedAt: nullableTimestamp("When the key was last used, to within a few seconds; `null`: never used."),
  expiresAt: nullableTimestamp("When the key stops working; `null`: never."),
};

export const ApiKey = z
  .object(apiKeyFields)
  .meta({ description: "An API key; the secret is never part of it." });

const ApiKeyCreated = z.object({
  ...apiKeyFields,
  key: z.string().meta({
    description: `The secret: \`${API_KEY_PREFIX}\` and 38 letters and digits. Shown this once; store it safely.`,
  }),
});

const ApiKeyRevoked = z.object({ id: id("key", "The revoked key's id"), revoked: z.literal(true) });

const jsonSchemaObject = (description: string) =>
  z.record(z.string(), z.json()).meta({ description, examples: [{ type: "object", properties: {} }] });

export const Plugin = z
  .object({
    name: z
      .string()
      .meta({ description: "The plugin's name, as an agent's `plugins` names it.", examples: ["time"] }),
    version: z.string().meta({ description: "The plugin's version.", examples: ["1.0.0"] }),
    description: z.string().meta({ description: "What the plugin does." }),
    configSchema: jsonSchemaObject(
      "The JSON Schema (draft 2020-12) of the plugin's `config`; `{}` parses when the plugin has a default config.",
    ),
    secrets: z.array(z.string()).meta({
      description:
        "Names of the agent secrets the plugin reads (`PUT /v1/agents/{agentId}/secrets/{name}`). A plugin whose config names a secret (the `mcp` plugin's `authSecret`) reads that one too.",
      examples: [[]],
    }),
    tools: z
      .array(
        z.object({
          name: z
            .string()
            .meta({ description: "The tool's name, as the model calls it.", examples: ["now"] }),
          description: z.string().meta({ description: "What the tool does, as the model reads it." }),
          inputSchema: jsonSchemaObject("The JSON Schema of the tool's arguments."),
        }),
      )
      .meta({
        description:
          "The tools the plugin gives an agent. A plugin whose tools depend on its config (`mcp`: those of the MCP server it connects to) lists none here.",
      }),
  })
  .meta({ description: "A plugin this deployment installs." });

export const Secret = z
  .object({
    name: z.string().meta({ description: "The secret's name.", examples: ["MCP_TOKEN"] }),
    updatedAt: timestamp("When its value was last set."),
  })
  .meta({ description: "An agent's secret: its name and when it was set. Its value is never shown." });

const ClientStatus = z
  .object({
    type: z.string().meta({ description: "The platform, as named in `clients`.", examples: ["telegram"] }),
    state: z
      .enum(["connected", "connecting", "stopped", "failed", "inert"])
      .meta({ description: "How the platform's connector stands." }),
    connectedAt: timestamp("When it last connected.").nullable(),
    lastEventAt: timestamp("When it last received a platform message.").nullable(),
    lastError: z
      .object({
        code: z.string().meta({ examples: ["CLIENT_AUTH_FAILED"] }),
        message: z.string(),
        at: timestamp("When it happened."),
      })
      .nullable()
      .meta({ description: "The last error the connector met, if any." }),
  })
  .meta({ description: "One platform client of an agent and how it stands." });

const SecretDeleted = z.object({
  name: z.string().meta({ description: "The deleted secret's name.", examples: ["MCP_TOKEN"] }),
  deleted: z.literal(true),
});

const webhookFields = {
  id: id("whk", "The endpoint's id"),
  url: z
    .string()
    .meta({ description: "Where deliveries are POSTed.", examples: ["https://example.com/hooks"] }),
  events: z.array(z.enum(SUBSCRIBABLE)).meta({
    description: 'The event types delivered to it, or `["*"]` for every type.',
    examples: [["agent.created", "agent.deleted"]],
  }),
  description: z.string().meta({ description: "Free text of its owner; empty when none was given." }),
  enabled: z.boolean().meta({ description: "Whether events are delivered to it." }),
  disabledReason: z
    .string()
    .nullable()
    .meta({
      description:
        "Why the service disabled it: it answered `410 Gone`, or every attempt failed for 5 days. `null` while it is enabled, or when its owner disabled it.",
      examples: [null],
    }),
  createdAt: timestamp("When it was created."),
  updatedAt: timestamp("When it last changed (an update, a rotation, a disabling)."),
};

export const Webhook = z
  .object(webhookFields)
  .meta({ description: "A webhook endpoint; its secret is never part of it." });

const WebhookCreated = z.object({
  ...webhookFields,
  secret: z.string().meta({
    description:
      "The signing secret: `whsec_` and the base64 of 24 random bytes. Shown this once (on create and on rotation); verify deliveries with it.",
    examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
  }),
});

const WebhookDeleted = z.object({ id: id("whk", "The deleted endpoint's id"), deleted: z.literal(true) });

const DELIVERED_EVENT_TYPES = [...PUBLISHED_EVENT_TYPES, TEST_EVENT_TYPE] as const;

export const Delivery = z
  .object({
    id: id("dlv", "The attempt's id"),
    eventId: id("evt", "The event's id: the `webhook-id` header of every attempt to deliver it"),
    eventType: z.enum(DELIVERED_EVENT_TYPES).meta({ description: "The event's type." }),
    attempt: z.number().int().min(1).meta({
      description:
        "1 for the event's first attempt at this endpoint, then 2, 3, … across retries and redeliveries.",
    }),
    status: z.enum(["pending", "succeeded", "failed"]).meta({
      description:
        "`pending` (waiting for its time, or being attempted), `succeeded` (the endpoint answered 2xx) or `failed` (see `error`).",
    }),
    responseStatus: z
      .number()
      .int()
      .nullable()
      .meta({ description: "The HTTP status the endpoint answered; `null` when it gave none." }),
    durationMs: z
      .number()
      .int()
      .min(0)
      .nullable()
      .meta({ description: "How long the attempt took, in milliseconds; `null` while pending." }),
    error: z
      .string()
      .nullable()
      .meta({
        description: "Why the attempt failed (a status, a timeout, a refused address); `null` unless failed.",
        examples: [null],
      }),
    createdAt: timestamp("When the attempt was scheduled."),
    nextAttemptAt: nullableTimestamp(
      "Pending: when it is due. Failed: when its retry is due; `null` when none follows.",
    ),
  })
  .meta({
    description:
      "One attempt to deliver one event to the endpoint. What the endpoint answered is never shown beyond its status.",
  });

const eventFields = (type: z.ZodType) => ({
  id: id("evt", "The event's id, also its `webhook-id` header: the same on every retry and redelivery"),
  type,
  createdAt: timestamp("When the event happened."),
});

const AgentDeletedData = z
  .object({ id: id("agt", "The deleted agent's id") })
  .meta({ description: "Data of `agent.deleted`: nothing else of the agent remains." });

const MessageFailedData = z
  .object({
    agentId: id("agt", "The agent"),
    messageId: id("msg", "The id the reply would have had (a stream's `message.started` named it)"),
    code: z.enum(ERROR_CODES).meta({ description: "The error code, as in the error envelope." }),
    message: z.string(),
  })
  .meta({
    description: "Data of `message.failed`: a send whose reply failed, with the error its caller got.",
  });

const WebhookTestData = z
  .object({
    webhookId: id("whk", "The endpoint the test was asked for"),
    message: z.string().meta({ examples: ["A test event, sent on request."] }),
  })
  .meta({ description: "Data of `webhook.test`." });

/** The bodies deliveries POST, by event type: the document's `webhooks`. */
export const WEBHOOK_EVENTS = [
  {
    types: ["agent.created", "agent.updated", "agent.status_changed"],
    schemaId: "AgentEvent",
    dataSchemaId: "Agent",
    description:
      "An agent was created, updated (every update), or changed status (by an update, or by the service setting `error` or clearing it). `data` is the agent after the change, as the API returns it, without `settings.secrets`.",
  },
  {
    types: ["agent.deleted"],
    schemaId: "AgentDeletedEvent",
    dataSchemaId: "AgentDeletedData",
    description: "An agent was deleted; `data` is its id.",
  },
  {
    types: ["message.completed"],
    schemaId: "MessageCompletedEvent",
    dataSchemaId: "Reply",
    description:
      "A reply was completed and stored, streamed or not; `data` is the reply object, as the send call returns it.",
  },
  {
    types: ["message.failed"],
    schemaId: "MessageFailedEvent",
    dataSchemaId: "MessageFailedData",
    description:
      "A send failed: the call ended with an error instead of a reply (a caller that went away is no failure); `data` names the message and the error, as in the error envelope.",
  },
  {
    types: [TEST_EVENT_TYPE],
    schemaId: "WebhookTestEvent",
    dataSchemaId: "WebhookTestData",
    description: "A test event, sent on request to one endpoint.",
  },
] as const;

function webhookEventSchemas(named: Map<string, z.ZodType>): [string, z.ZodType][] {
  return WEBHOOK_EVENTS.map((event) => {
    const data = named.get(event.dataSchemaId);
    if (!data) throw new Error(`no schema ${event.dataSchemaId} for ${event.schemaId}`);
    const [first, ...others] = event.types;
    const type = others.length === 0 ? z.literal(first) : z.enum([first, ...others]);
    return [
      event.schemaId,
      z.object({ ...eventFields(type.meta({ description: "The event's type." })), data }).meta({
        description: `${event.description} Delivered as the body of a POST, signed per Standard Webhooks (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`).`,
      }),
    ];
  });
}

const FieldIssue = z
  .object({
    field: z.string().meta({
      description: "The field, in dotted and indexed notation; `body` for the body as a whole.",
      examples: ["bio[2]"],
    }),
    issue: z.string().meta({ examples: ["must not be empty"] }),
  })
  .meta({ description: "One problem with one field of the request." });

/** Create and update: the agent, and what was kept but will not act yet (a provider not configured here). */
const AgentWriteResponse = z
  .object({
    success: z.literal(true),
    data: Agent,
    warnings: z.array(FieldIssue).meta({
      description:
        "What was written but will not act yet: a `modelProvider` this server has no configuration for, naming the variable to set. Empty when there is nothing to say.",
    }),
  })
  .meta({ description: "The agent written, and the warnings." });

export const ErrorResponse = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(ERROR_CODES).meta({ description: "What went wrong; each code has one HTTP status." }),
      message: z.string().meta({ description: "What went wrong, for a person." }),
      details: z
        .array(FieldIssue)
        .optional()
        .meta({ description: "Each field problem, on `INVALID_REQUEST` about fields." }),
      requestId: z.string().meta({
        description: "The request's id, as in `X-Request-Id`.",
        examples: [`req_${EXAMPLE_ULID}`],
      }),
    }),
  })
  .meta({ description: "Every error response." });

const Health = z.object({ status: z.literal("ok") });
const Readiness = z.object({
  status: z.enum(["ready", "draining"]),
  dependencies: z
    .record(z.string(), z.enum(["up", "down"]))
    .optional()
    .describe(
      "Whether each service and store this gateway calls answers now (`registry`, `conversation`, `webhooks`, `redis`). Reported, not required: while one is down, requests that need it answer 503 AGENT_UNAVAILABLE.",
    ),
});

/** A JSON Schema pattern matching exactly these names, with the whitespace the gateway trims around them. */
function oneOfNamesPattern(names: readonly string[]): string {
  const escaped = names.map((name) => name.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&"));
  return `^[${TRIMMED_SPACE}]*(?:${escaped.join("|")})[${TRIMMED_SPACE}]*$`;
}

/**
 * The agent request schemas of one deployment (see `modelChoiceIssues`): `modelProvider` says which providers it
 * is configured for (every provider is accepted; the others with a warning), and where a provider serves only
 * some models, `model` must name one of them whenever that provider is
 * named, or is the default one and none is named. What a PATCH sending one half meets in the stored other half
 * no schema can state; the field descriptions say so.
 */
function narrowToDeployment(input: Record<string, JsonSchema>, served: ServedProviders): void {
  const names = served.providers.map((provider) => provider.name);
  const list = (values: readonly string[]) => values.map((value) => `\`${value}\``).join(", ");
  const limited = served.providers.filter((provider) => provider.models.length > 0);
  for (const id of ["CreateAgentRequest", "UpdateAgentRequest"] as const) {
    const schema = input[id]!;
    const properties = schema.properties as Record<string, JsonSchema>;
    properties.modelProvider!.description = `${properties.modelProvider!.description} This deployment is configured for ${list(names)}; its default is \`${served.defaultProvider}\`.`;
    const rules: JsonSchema[] = [];
    for (const provider of limited) {
      const then = { properties: { model: { pattern: oneOfNamesPattern(provider.models) } } };
      rules.push({
        if: { required: ["modelProvider"], properties: { modelProvider: { const: provider.name } } },
        then,
      });
      if (provider.name !== served.defaultProvider) continue;
      const unnamed =
        id === "CreateAgentRequest"
          ? { not: { required: ["modelProvider"] } }
          : { required: ["modelProvider"], properties: { modelProvider: { const: null } } };
      rules.push({ if: unnamed, then });
    }
    if (rules.length > 0) {
      schema.allOf = rules;
      const notes = limited.map((provider) => `\`${provider.name}\` serves only ${list(provider.models)}`);
      properties.model!.description = `${properties.model!.description} Here ${notes.join("; ")}.`;
    }
    const fallbacks = (properties.settings?.properties as Record<string, JsonSchema> | undefined)?.fallbacks;
    if (fallbacks) narrowFallbacks(fallbacks, limited);
  }
}

/** Fallbacks name a model of the providers that serve only some, as the agent's own choice does. */
function narrowFallbacks(fallbacks: JsonSchema, limited: ServedProviders["providers"]): void {
  const array = ((fallbacks.anyOf as JsonSchema[] | undefined) ?? [fallbacks]).find(
    (s) => s.type === "array",
  );
  const item = array?.items as JsonSchema | undefined;
  if (!item || limited.length === 0) return;
  item.allOf = limited.map((provider) => {
    // JSON Schema's if/then: the rule is data, never awaited.
    const then = {
      properties: { model: { anyOf: [{ type: "null" }, { pattern: oneOfNamesPattern(provider.models) }] } },
    };
    return { if: { properties: { modelProvider: { const: provider.name } } }, then };
  });
}

/**
 * Every named schema of the document. With `served`, the agent requests are this deployment's (which providers
 * and models it serves); without, they list every provider the product has.
 */
export function componentSchemas(served?: ServedProviders): Record<string, JsonSchema> {
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
    ["WebhookTestData", WebhookTestData],
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
