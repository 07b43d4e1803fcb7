import { MESSAGE_BOUNDS } from "@agentry/core";
import type { ErrorCode } from "@agentry/errors";
import { NUL_FREE_PATTERN } from "../http/body.js";
import type { ParamDoc } from "../routes/define.js";
import { HISTORY_PAGE } from "../validation/history.js";
import { SECRET_NAME_PATTERN } from "../validation/plugins.js";

/*
 * What the operations of the document share; each operation's own description is in its declaration
 * (`defineRoute`, in routes/).
 */

/** Each path parameter, by name, as every operation whose path has it documents it. */
export const PATH_PARAMETERS: Record<string, ParamDoc> = {
  agentId: {
    description:
      "The agent's id (`agt_…`). An id of another account's agent, or not of that form, is answered `404 AGENT_NOT_FOUND`.",
    example: "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
  conversationId: {
    description:
      "The conversation's id (`conv_…`). An id of another agent's or account's conversation, or not of that form, is answered `404 CONVERSATION_NOT_FOUND`.",
    example: "conv_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
  messageId: {
    description:
      "The message's id (`msg_…`), as a list or the send call gave it. An id of another agent's or account's message, or not of that form, is answered `404 MESSAGE_NOT_FOUND`.",
    example: "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
  userId: {
    description: `The user id, as messages were sent with it, URL-encoded: 1 to ${MESSAGE_BOUNDS.idMaxLength} characters, no U+0000 (otherwise \`400 INVALID_REQUEST\`).`,
    example: "user-42",
    bounds: { minLength: 1, maxLength: MESSAGE_BOUNDS.idMaxLength, pattern: NUL_FREE_PATTERN },
  },
  webhookId: {
    description:
      "The webhook endpoint's id (`whk_…`). An id of another account's endpoint, or not of that form, is answered `404 WEBHOOK_NOT_FOUND`.",
    example: "whk_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
  deliveryId: {
    description:
      "A delivery's id (`dlv_…`), as the endpoint's delivery log lists it. An id of another endpoint's delivery, or not of that form, is answered `404 DELIVERY_NOT_FOUND`.",
    example: "dlv_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
  name: {
    description:
      "The secret's name: 1 to 64 characters of `A-Z`, `a-z`, `0-9`, `_` and `-` (otherwise `400 INVALID_REQUEST`).",
    example: "MCP_TOKEN",
    bounds: { minLength: 1, maxLength: 64, pattern: SECRET_NAME_PATTERN },
  },
  keyId: {
    description:
      "The API key's id (`key_…`). Another account's key, or a revoked one, is answered `404 NOT_FOUND`.",
    example: "key_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
};

/** How every cursor-paged list pages, for the operations' descriptions. */
export const CURSOR_NOTE = `Cursor-paged: \`limit\` 1 to ${HISTORY_PAGE.maxLimit} (default ${HISTORY_PAGE.defaultLimit}); \`before=<id>\` returns the items just older than that one, \`after=<id>\` those just newer, presented in the list's order either way; the next page's cursor is the last item's id (\`before\` it when newest first, \`after\` it when oldest first). A cursor that is not an item of this list (unknown, or another agent's) is answered \`400 INVALID_REQUEST\`, as are unknown or repeated parameters and values out of range.`;

/** The error codes every authenticated operation can answer. */
export const AUTHENTICATED_ERRORS: ErrorCode[] = [
  "UNAUTHORIZED",
  "FORBIDDEN",
  "RATE_LIMIT_EXCEEDED",
  "INTERNAL_ERROR",
  "AGENT_UNAVAILABLE",
];
