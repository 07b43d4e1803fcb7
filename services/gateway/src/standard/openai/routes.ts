import type { ServedRoute } from "../../routes/define.js";
import { chatCompletions, validateChatCompletion } from "./chat.js";
import { getModel, listModels } from "./models.js";
import { CHAT_COMPLETIONS_PATH, MODELS_PATH, openAiError } from "./wire.js";

/**
 * The OpenAI-compatible operations (docs/api/standard-clients.md): served through the same chain as every REST
 * route (key, scope, validation, limits), with errors in OpenAI's shape (`openAiFrame`). Chat completions spend the
 * addressed agent's message bucket and concurrency slots, as a message does.
 */
export const openAiRoutes: ServedRoute[] = [
  {
    method: "POST",
    path: CHAT_COMPLETIONS_PATH,
    scope: "messages:send",
    limit: "messagesPerMinute",
    concurrency: true,
    validate: validateChatCompletion,
    handle: chatCompletions,
    errorBody: openAiError,
  },
  { method: "GET", path: MODELS_PATH, scope: "agents:read", limit: "listPerMinute", handle: listModels },
  {
    method: "GET",
    path: `${MODELS_PATH}/:model`,
    scope: "agents:read",
    limit: "getPerMinute",
    handle: getModel,
  },
];
