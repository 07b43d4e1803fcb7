import { FINISH_REASONS, PROVIDER_NAMES } from "@agentry/core";
import { ERROR_CODES } from "@agentry/errors";
import { z } from "zod";
import { type JsonSchema, schemaRef } from "../openapi/convert.js";
import { id, success, timestamp } from "./common.schemas.js";

/*
 * A reply and its stream (docs/api/messages-and-streams.md, "Reply"): the answers of Send Message, background
 * messages, and the server-sent events of a streamed reply.
 */

export const Usage = z.object({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  totalTokens: z.number().int().min(0).meta({ description: "`inputTokens + outputTokens`." }),
});

export const conversationEcho = (what: string) =>
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

export const toolCalls = z.array(ToolCall).optional().meta({
  description:
    "The tools of the agent's plugins the model called during the turn, in order, with their outcomes; absent when it called none.",
});

export const Citation = z
  .object({
    documentId: id("doc", "The document"),
    chunk: z.number().int().min(0).meta({ description: "The chunk's position in the document, from 0." }),
    score: z
      .number()
      .min(0)
      .max(1)
      .meta({
        description:
          "How well it matched the message, relative to the best passage of the reply: 1 for the best, less for the others.",
        examples: [1],
      }),
  })
  .meta({ description: "A chunk of one of the agent's documents that the reply's prompt carried." });

export const citations = z.array(Citation).optional().meta({
  description:
    "The chunks of the agent's documents the prompt carried, best first, under the markers `[1]`, `[2]`, ... the model was asked to cite; absent when it carried none.",
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
        'Why generation stopped: `stop` (natural end), `length` (cut short: `maxTokens` reached or, on the `local` provider, its reply time limit or a loop of repeated text), `content_filter` (the provider withheld content), `other`, or `cancelled` (a later message to the conversation interrupted it with `onConflict: "interrupt"`: the text is what was generated before).',
    }),
    usage: Usage.meta({ description: "Tokens used, as the provider reported them; zeros when it did not." }),
    latencyMs: z
      .number()
      .int()
      .min(0)
      .meta({ description: "Milliseconds from receipt to the complete reply." }),
    createdAt: timestamp("When the reply was complete."),
    toolCalls,
    citations,
  })
  .meta({ description: "The agent's complete reply to one message." });

export const MessageResponse = success(Reply);

export const PendingToolCall = z
  .object({
    id: z.string().meta({ description: "The call's id: what `POST …/messages/{messageId}/approve` names." }),
    tool: z.string().meta({ description: 'The tool as the model called it: `"<plugin>__<tool>"`.' }),
    arguments: z.string().meta({ description: "The arguments as JSON text, as the model wrote them." }),
  })
  .meta({
    description:
      "A tool call the model made that waits for a person's approval before it runs. Kept by the server: an answer names calls by id only, so what runs is what the model asked for.",
  });

export const BackgroundMessageAccepted = z
  .object({
    id: id("msg", "The id the reply will carry: read it at `GET /v1/agents/{agentId}/messages/{id}`"),
    status: z.enum(["pending", "requires_action"]).meta({
      description:
        "`pending`: the reply is being generated (`background: true`). `requires_action`: a send without `background` whose turn paused before tools that wait for approval (see `pendingToolCalls`).",
    }),
    pendingToolCalls: z.array(PendingToolCall).optional().meta({
      description: "`requires_action` only: the calls to approve or refuse.",
    }),
  })
  .meta({
    description:
      "A message accepted without its reply: a background message (its reply is generated whatever happens to the caller), or a send paused for tool approval.",
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
    status: z.enum(["pending", "requires_action", "completed", "failed", "cancelled"]).meta({
      description:
        '`pending`: the reply is being generated (only the ids are known); `requires_action`: paused before tool calls that wait for a person\'s approval (see `pendingToolCalls`; answer at `POST …/messages/{messageId}/approve`); `completed`: every field of the reply is here; `failed`: see `error`; `cancelled`: stopped, either by a later message that interrupted it (every field of the reply is here, with the text it had and `finishReason: "cancelled"`) or by the kill switch (`error` says so, no reply).',
    }),
    ...Object.fromEntries(
      Object.entries(Reply.shape)
        .filter(([name]) => !BACKGROUND_IDS.includes(name))
        .map(([name, schema]) => [name, (schema as z.ZodType).optional()]),
    ),
    error: ErrorSummary.optional().meta({
      description: "Why it failed; `failed`, and `cancelled` by the kill switch, only.",
    }),
    pendingToolCalls: z.array(PendingToolCall).optional().meta({
      description: "`requires_action` only: the calls still waiting for an answer.",
    }),
    approvalExpiresAt: timestamp(
      "`requires_action` only: when the wait ends; unanswered by then, the message fails with `APPROVAL_EXPIRED`.",
    ).optional(),
  })
  .meta({
    description:
      "A message sent with `background: true` (or paused for tool approval): the reply object with `status` added. One object with optional fields rather than a union of three: `pending` has only `id`, `agentId`, `userId`, `roomId` and `status`; `completed` has every field of `Reply` as well; `failed` has the ids and `error`; `cancelled` has either the reply's fields or `error`; `requires_action` has the ids, `pendingToolCalls` and `approvalExpiresAt`. A completed one is answered so for as long as its reply is stored; a failed one for 24 hours after it ended (or `STREAM_RETENTION`, if longer).",
  });

/**
 * What BackgroundMessage's description says of each `status`, as JSON Schema's if/then (which the conversion
 * cannot state), so that a validator holds every answer to it. `reply` is the converted `Reply`.
 */
export function backgroundStates(reply: JsonSchema): JsonSchema[] {
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
  const approval = (present: boolean) => ({ pendingToolCalls: present, approvalExpiresAt: present });
  return [
    when("pending", { properties: { ...fields(false), error: false, ...approval(false) } }),
    when("requires_action", {
      properties: { ...fields(false), error: false, ...approval(true) },
      required: ["pendingToolCalls", "approvalExpiresAt"],
    }),
    when("completed", { properties: { ...fields(true), error: false, ...approval(false) }, required }),
    when("failed", {
      properties: { ...fields(false), error: true, ...approval(false) },
      required: ["error"],
    }),
    when("cancelled", { properties: approval(false) }),
  ];
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

export const ToolApprovalRequired = z
  .object({
    messageId: id("msg", "The paused message: the id the reply will carry"),
    pendingToolCalls: z.array(PendingToolCall).meta({ description: "The calls to approve or refuse." }),
  })
  .meta({
    description:
      "Data of `tool.approval_required`: the turn paused before tool calls that wait for a person's approval. Ends the stream; answer at `POST …/messages/{messageId}/approve`.",
  });

export const ApproveToolCallsBody = z
  .strictObject({
    toolCallIds: z
      .array(z.string().min(1, "must not be empty"), { error: "must be an array of tool call ids" })
      .min(1, "must name at least one pending call")
      .max(128, "must name at most 128 calls")
      .meta({ description: "The pending calls this answer decides (`pendingToolCalls[].id`)." }),
    approve: z.boolean({ error: "must be a boolean" }).meta({
      description: "`true`: the calls run; `false`: the model is told the person refused them.",
    }),
    reason: z
      .string()
      .max(1000, "must be at most 1000 characters")
      .optional()
      .meta({ description: "Given to the model with a refusal." }),
  })
  .meta({ description: "A person's answer to tool calls a message paused before." });

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
    event: "tool.approval_required",
    eventSchemaId: "ToolApprovalRequiredEvent",
    dataSchemaId: "ToolApprovalRequired",
    terminal: true,
    description:
      "The turn paused before tool calls that wait for a person's approval. Ends the stream; the message is `requires_action` until answered.",
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
export function streamEventSchemas(): Record<string, JsonSchema> {
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
      "One server-sent event of a streamed reply: `message.started`, any number of `message.delta`, `tool.call` and `tool.result`, then exactly one of `message.completed`, `tool.approval_required` or `error` (`x-terminal`), after which the stream closes.",
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
