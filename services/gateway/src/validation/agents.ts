import { AGENT_BOUNDS as BOUNDS, PAGE_LIMIT, PROVIDER_NAMES } from "@agentry/core";
import { AppError, type FieldIssue } from "@agentry/errors";
import { z } from "zod";
import { notBlankText, trimmedText } from "./text.js";

const plainObject = (what: string) =>
  z.record(z.string(), z.json(), { error: `must be a JSON object (${what})` });

const stringItem = notBlankText(BOUNDS.stringItemMaxLength);

const stringList = z
  .array(stringItem, { error: "must be an array of strings" })
  .max(BOUNDS.arrayMaxItems, `must hold at most ${BOUNDS.arrayMaxItems} items`);

const name = trimmedText(1, BOUNDS.nameMaxLength).meta({
  description: `Name of the agent: 1 to ${BOUNDS.nameMaxLength} characters once surrounding whitespace is trimmed; stored trimmed.`,
  examples: ["Ada"],
});

/** A client is a platform name or an object with a `type` and that platform's configuration. */
const client = z.union([stringItem, z.looseObject({ type: stringItem })], {
  error: "must be a platform name or an object with a 'type'",
});

/** A plugin is a name or `{name, enabled?, config?, requireApproval?}`. */
const plugin = z.union(
  [
    stringItem,
    z.strictObject({
      name: stringItem,
      enabled: z.boolean({ error: "must be a boolean" }).optional(),
      config: plainObject("plugin configuration").optional(),
      requireApproval: z
        .union([z.boolean(), z.array(stringItem, { error: "must be an array of tool names" })], {
          error: "must be true, false or an array of the plugin's tool names",
        })
        .optional()
        .meta({
          description:
            "Calls of these tools wait for a person's approval before they run: `true` for all the plugin's tools, or the names of some (as `GET /v1/plugins` lists them; a name the plugin does not have is refused with `400`). The message then stands in `requires_action` until `POST /v1/agents/{agentId}/messages/{messageId}/approve` decides.",
        }),
    }),
  ],
  { error: "must be a plugin name or an object {name, enabled?, config?, requireApproval?}" },
);

const modelProvider = z.enum(PROVIDER_NAMES, { error: `must be one of: ${PROVIDER_NAMES.join(", ")}` }).meta({
  description:
    "The AI model provider. Unset: the server's default provider (`DEFAULT_MODEL_PROVIDER`), resolved when a message is sent. Every provider this server has a client for is accepted, configured here or not; one with no configuration (no `OPENAI_API_KEY`, say) is written with a `warnings` entry naming the variable to set, and messages to the agent fail with `502 MODEL_ERROR` until it is set. Any other value is refused with `400`.",
});
const model = trimmedText(1, BOUNDS.modelMaxLength).meta({
  description: `The model to use, as the provider names it: 1 to ${BOUNDS.modelMaxLength} characters once trimmed, stored trimmed. Unset: the provider's default model. The hosted providers (\`openai\`, \`anthropic\`) take any name and refuse an unknown one when called (\`502 MODEL_ERROR\`); \`local\` serves only the model files the deployment runs, named in the document it serves at \`/v1/openapi.json\`, and any other name is refused with \`400\`, whether \`local\` is named or is the default provider.`,
  examples: ["gpt-4o-mini"],
});

const writable = {
  bio: stringList.meta({
    description: "Biographical statements about the agent.",
    examples: [["Counts things."]],
  }),
  personality: plainObject("personality traits").meta({
    description: "Personality traits and communication style, as a JSON object.",
    examples: [{ tone: "dry", humor: "subtle" }],
  }),
  knowledge: stringList.meta({ description: "Areas of expertise and knowledge.", examples: [["engines"]] }),
  goals: stringList.meta({ description: "Objectives and motivations.", examples: [["help"]] }),
  clients: z
    .array(client, { error: "must be an array" })
    .max(BOUNDS.arrayMaxItems, `must hold at most ${BOUNDS.arrayMaxItems} items`)
    .meta({
      description:
        "Platform integrations: a platform name, or an object with a `type` and that platform's configuration.",
      examples: [["discord", { type: "telegram", channel: "@ada" }]],
    }),
  settings: plainObject("settings").meta({
    description:
      "Platform-specific configuration, as a JSON object. `temperature` and `maxTokens` tune generation; other keys are kept as given.",
  }),
  plugins: z
    .array(plugin, { error: "must be an array" })
    .max(BOUNDS.arrayMaxItems, `must hold at most ${BOUNDS.arrayMaxItems} items`)
    .meta({
      description:
        "Plugin configurations: a plugin name (enabled, with its default config), or an object `{name, enabled?, config?}`. An enabled plugin must be one `GET /v1/plugins` lists and its `config` must satisfy that plugin's `configSchema`; otherwise `400 INVALID_REQUEST` naming `plugins[i]` or the config's field. A disabled plugin is kept as given, known or not, and does nothing.",
      examples: [["time", { name: "calendar", enabled: false, config: { region: "eu" } }]],
    }),
};

export const createAgentBody = z.strictObject(
  {
    name,
    bio: writable.bio.optional(),
    personality: writable.personality.optional(),
    knowledge: writable.knowledge.optional(),
    goals: writable.goals.optional(),
    clients: writable.clients.optional(),
    settings: writable.settings.optional(),
    modelProvider: modelProvider.optional(),
    model: model.optional(),
    plugins: writable.plugins.optional(),
  },
  { error: "must be a JSON object" },
);

export const updateAgentBody = z.strictObject(
  {
    name: name.optional(),
    bio: writable.bio.optional(),
    personality: writable.personality.optional(),
    knowledge: writable.knowledge.optional(),
    goals: writable.goals.optional(),
    clients: writable.clients.optional(),
    settings: writable.settings.optional(),
    modelProvider: modelProvider.nullable().optional().meta({
      description:
        "The AI model provider; `null` resets it to the server's default. As on create, a provider with no configuration here is written with a warning. Sent without `model`, it is checked with the agent's current model.",
    }),
    model: model.nullable().optional().meta({
      description:
        "The model to use; `null` resets it to the provider's default. It must be one the provider serves, as on create; sent without `modelProvider`, it is checked against the agent's current provider, which no schema can state.",
    }),
    plugins: writable.plugins.optional(),
    status: z
      .enum(["active", "inactive"], {
        error: (issue) =>
          issue.input === "error"
            ? "'error' is set by the service and cannot be set by an update; send 'active' or 'inactive'"
            : "must be 'active' or 'inactive'",
      })
      .optional()
      .meta({ description: "`active` or `inactive`. `error` is set only by the service." }),
  },
  { error: "must be a JSON object" },
);

export type CreateAgentBody = z.infer<typeof createAgentBody>;
export type UpdateAgentBody = z.infer<typeof updateAgentBody>;

/** Fields of the agent record that only the service sets. */
const SERVICE_FIELDS = ["id", "status", "statusReason", "createdAt", "updatedAt", "apiEndpoint"] as const;

/**
 * Refuses service-set fields on create with a reason of their own rather than a bare "unknown field": a caller
 * who sends `status` on create learns that new agents start active.
 */
export function refuseServiceFields(body: unknown, allowed: readonly string[]): void {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return;
  const details: FieldIssue[] = [];
  for (const field of SERVICE_FIELDS) {
    if (Object.hasOwn(body, field) && !allowed.includes(field)) {
      details.push({
        field,
        issue:
          field === "status"
            ? "cannot be set on create; a new agent is active"
            : "is set by the service and cannot be sent",
      });
    }
  }
  if (details.length > 0) {
    const fields = details.map((detail) => detail.field).join(", ");
    throw new AppError("INVALID_REQUEST", `Invalid request body: ${fields} cannot be sent here.`, {
      details,
    });
  }
}

/** Page numbers travel as int32 in the RPC contract. */
const MAX_PAGE = 2_147_483_647;

const positiveInt = (max: number) => {
  const message = `must be an integer from 1 to ${max}`;
  return z
    .string({ error: "must be given once" })
    .regex(/^\d+$/, message)
    .transform(Number)
    .pipe(z.number().int().min(1, message).max(max, message));
};

export const listAgentsQuery = z.strictObject({
  page: positiveInt(MAX_PAGE).default(1).meta({ description: "Page number, from 1." }),
  limit: positiveInt(PAGE_LIMIT.max)
    .default(PAGE_LIMIT.default)
    .meta({ description: `Agents per page, from 1 to ${PAGE_LIMIT.max}.` }),
  status: z
    .enum(["active", "inactive", "error"], { error: "must be one of: active, inactive, error" })
    .optional()
    .meta({ description: "Only agents with this status." }),
  sortBy: z
    .enum(["createdAt", "name", "status"], { error: "must be one of: createdAt, name, status" })
    .default("createdAt")
    .meta({ description: "Sort field; ties are broken by id. `name` compares names by code point." }),
  order: z
    .enum(["asc", "desc"], { error: "must be 'asc' or 'desc'" })
    .default("desc")
    .meta({ description: "Sort order." }),
});

export type ListAgentsQuery = z.infer<typeof listAgentsQuery>;
