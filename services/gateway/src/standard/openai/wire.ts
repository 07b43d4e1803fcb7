import { MESSAGE_BOUNDS } from "@agentry/core";
import { AppError, httpStatusOf } from "@agentry/errors";
import { z } from "zod";

/*
 * OpenAI's Chat Completions and Models wire format (https://platform.openai.com/docs/api-reference/chat), the part
 * this API answers: text messages in, one text choice out, as JSON or as `chat.completion.chunk` events.
 */

export const CHAT_COMPLETIONS_PATH = "/v1/chat/completions";
export const MODELS_PATH = "/v1/models";
/** Every conversation held through this API is in this room of the agent, per user. */
export const OPENAI_ROOM_ID = "openai";

/** Whether a request path is one of the OpenAI-compatible routes, whose errors are in OpenAI's shape. */
export function isOpenAiPath(path: string): boolean {
  return path === CHAT_COMPLETIONS_PATH || path === MODELS_PATH || path.startsWith(`${MODELS_PATH}/`);
}

const textPart = z.object({ type: z.literal("text"), text: z.string() });

/** A message's content: a string, or text parts (other parts, such as images, are not taken). */
const content = z.union(
  [z.string(), z.array(textPart, { error: "must be a string or an array of text parts" })],
  {
    error: "must be a string or an array of text parts ({type: 'text', text})",
  },
);

const message = z.object({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"], {
    error: "must be system, developer, user or assistant",
  }),
  content: content.nullish(),
  name: z.string().optional(),
  tool_calls: z.array(z.unknown()).optional(),
});

/**
 * The request body. Fields this API does not use (sampling settings, `max_tokens`, `response_format`, …) are
 * accepted and ignored: the agent's own settings decide them, as they do for any message to it.
 */
export const chatCompletionBody = z.looseObject({
  model: z.string({ error: "must be an agent id (GET /v1/models lists them)" }).min(1, "must be an agent id"),
  messages: z
    .array(message, { error: "must be an array of messages" })
    .min(1, "must hold at least one message"),
  stream: z.boolean({ error: "must be a boolean" }).nullish(),
  stream_options: z.object({ include_usage: z.boolean({ error: "must be a boolean" }).nullish() }).nullish(),
  user: z
    .string({ error: "must be a string" })
    .min(1, "must not be empty; omit it to use the default conversation")
    .max(MESSAGE_BOUNDS.idMaxLength, `must be at most ${MESSAGE_BOUNDS.idMaxLength} characters`)
    .optional(),
  n: z.number({ error: "must be 1" }).nullish(),
  tools: z.array(z.unknown()).nullish(),
  functions: z.array(z.unknown()).nullish(),
});

export type ChatCompletionBody = z.infer<typeof chatCompletionBody>;
export type ChatMessage = ChatCompletionBody["messages"][number];

/** A message's text: its string, or its text parts joined. */
export function messageText(message: ChatMessage): string {
  const value = message.content ?? "";
  return typeof value === "string" ? value : value.map((part) => part.text).join("");
}

/** OpenAI's `finish_reason` for one of this API's finish reasons. */
export function finishReasonOf(reason: string): "stop" | "length" | "content_filter" {
  return reason === "length" || reason === "content_filter" ? reason : "stop";
}

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** OpenAI's `error.type` for each status family. */
function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** The field an error is about, as OpenAI's `error.param` names it; null when it is about no one field. */
function paramOf(error: AppError): string | null {
  if (error.code === "AGENT_NOT_FOUND" || error.code === "AGENT_INACTIVE") return "model";
  return error.details?.[0]?.field ?? null;
}

/**
 * An error in OpenAI's shape, `{error: {message, type, code, param}}`, which OpenAI's SDKs turn into their typed
 * errors by status. `code` is this API's error code (docs/api/errors-and-status-codes.md).
 */
export function openAiError(error: AppError) {
  const status = httpStatusOf(error.code);
  return {
    error: { message: error.message, type: errorType(status), code: error.code, param: paramOf(error) },
  };
}

/** Refusals of what this API does not do, before anything is sent to the agent. */
export function unsupported(field: string, issue: string): AppError {
  return new AppError("INVALID_REQUEST", `${field} ${issue}.`, { details: [{ field, issue }] });
}
