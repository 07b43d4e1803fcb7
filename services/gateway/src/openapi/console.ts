import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE, SESSION_PATH } from "../http/console-session.js";
import { CONSOLE_PATH } from "../http/console-static.js";
import { OIDC_STATUS_PATH } from "../http/oidc.js";
import type { JsonSchema } from "./convert.js";
import { errorResponse } from "./responses.js";

const SESSION: JsonSchema = {
  type: "object",
  required: ["id", "account", "createdAt", "expiresAt", "idleTimeoutSeconds"],
  properties: {
    id: { type: "string", description: "`ses_` and a ULID." },
    account: {
      type: "object",
      required: ["id", "name"],
      properties: { id: { type: "string" }, name: { type: "string" } },
    },
    createdAt: { type: "string", format: "date-time" },
    expiresAt: { type: "string", format: "date-time", description: "The absolute timeout." },
    idleTimeoutSeconds: {
      type: "integer",
      description: "The session ends after this long without a request.",
    },
  },
};

const envelope = (data: JsonSchema): JsonSchema => ({
  type: "object",
  required: ["success", "data"],
  properties: { success: { const: true }, data },
});

/**
 * The web console's routes: its files, and the session it signs in to with a one-time link. They are for the
 * console in a browser, so no SDK carries them (`x-sdk-exclude`).
 */
export function consolePaths(
  plain: (description: string, content: JsonSchema) => JsonSchema,
): Record<string, Record<string, JsonSchema>> {
  const cookieNote = `The session's secret travels in the HttpOnly cookie \`${SESSION_COOKIE}\`; its CSRF token in the readable cookie \`${CSRF_COOKIE}\`, which every unsafe request made with the session repeats in the \`${CSRF_HEADER}\` header. A session may call every REST operation, with every scope, instead of an API key.`;
  const common = { tags: ["Console"], security: [], "x-sdk-exclude": true };
  return {
    [SESSION_PATH]: {
      post: {
        ...common,
        operationId: "signInToConsole",
        summary: "Sign in to the web console",
        description: `Redeems a one-time sign-in link's token (printed by \`agentry console link\`) for a console session. ${cookieNote}`,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["token"],
                properties: {
                  token: {
                    type: "string",
                    pattern: "^[A-Za-z0-9_-]{43}$",
                    description: "The token of the link's `#token=` part: 32 random bytes in base64url.",
                  },
                },
                additionalProperties: false,
              },
            },
          },
        },
        responses: {
          "201": plain("Signed in; the cookies are set.", {
            "application/json": { schema: envelope(SESSION) },
          }),
          "400": errorResponse(["INVALID_REQUEST"], "never"),
          "401": errorResponse(["UNAUTHORIZED"], "never"),
          "413": errorResponse(["PAYLOAD_TOO_LARGE"], "never"),
          "415": errorResponse(["UNSUPPORTED_MEDIA_TYPE"], "never"),
        },
      },
      get: {
        ...common,
        operationId: "getConsoleSession",
        summary: "The console session",
        description: `The session the cookie carries. ${cookieNote}`,
        responses: {
          "200": plain("The session.", { "application/json": { schema: envelope(SESSION) } }),
          "401": errorResponse(["UNAUTHORIZED"], "never"),
        },
      },
      delete: {
        ...common,
        operationId: "signOutOfConsole",
        summary: "Sign out of the web console",
        description: `Ends the session the cookie carries and clears the cookies. ${cookieNote}`,
        responses: {
          "200": plain("Signed out.", {
            "application/json": {
              schema: envelope({
                type: "object",
                required: ["signedOut"],
                properties: { signedOut: { const: true } },
              }),
            },
          }),
          "403": errorResponse(["FORBIDDEN"], "never"),
        },
      },
    },
    [OIDC_STATUS_PATH]: {
      get: {
        ...common,
        operationId: "getConsoleOidc",
        summary: "Whether the console signs in by OIDC",
        description:
          'Says whether this deployment signs people in to the console by OIDC (`OIDC_ISSUER` set) and, if it does, where the sign-in starts: a browser sent there goes to the provider and comes back signed in as the member with the verified email (docs/api/members.md, "Signing in by OIDC").',
        responses: {
          "200": plain("Whether OIDC sign-in is on.", {
            "application/json": {
              schema: envelope({
                type: "object",
                required: ["enabled", "startUrl"],
                properties: {
                  enabled: { type: "boolean" },
                  startUrl: {
                    type: ["string", "null"],
                    description: "The path that starts a sign-in; null when OIDC is off.",
                  },
                },
              }),
            },
          }),
        },
      },
    },
    [CONSOLE_PATH]: {
      get: {
        ...common,
        operationId: "getConsole",
        summary: "The web console's page",
        description: "The console's single page (`/console/`); `/console` without its slash redirects there.",
        responses: {
          "200": plain("The page.", { "text/html": { schema: { type: "string" } } }),
          "302": plain("To `/console/`, in the `Location` header.", {
            "text/html": { schema: { type: "string" } },
          }),
        },
      },
    },
    [`${CONSOLE_PATH}/{path}`]: {
      get: {
        ...common,
        operationId: "getConsolePage",
        summary: "The web console",
        description:
          "The console's page and files. Any path that is not a file answers the page, which routes in the browser.",
        parameters: [{ name: "path", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          "200": plain("The page or one of its files.", {
            "text/html": { schema: { type: "string" } },
            "text/javascript": { schema: { type: "string" } },
            "text/css": { schema: { type: "string" } },
          }),
          "404": { $ref: "#/components/responses/RouteNotFound" },
        },
      },
    },
  };
}
