import {
  AGENT_BOUNDS,
  FALLBACK_MAX_ITEMS,
  GENERATION_BOUNDS,
  PROVIDER_NAMES,
  TOOL_CHOICES,
} from "@agentry/core";
import { z } from "zod";
import type { JsonSchema } from "../openapi/convert.js";
import type { ServedProviders } from "../providers.js";
import { createAgentBody } from "../validation/agents.js";
import { NOT_BLANK_PATTERN, TRIMMED_SPACE } from "../validation/text.js";
import { EXAMPLE_ULID, FieldIssue, id, Pagination, success, timestamp } from "./common.schemas.js";
import { type AgentStatusName, STATUS_VALUES } from "./present.js";

/*
 * The agent record and the answers of the agent routes (docs/api/agents.md, "Record"). Its field schemas are the
 * requests' own, so a bound changes in one place; `narrowToDeployment` fits the request schemas to what one
 * deployment serves.
 */

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

export const AgentResponse = success(Agent);
export const AgentListResponse = z.object({
  success: z.literal(true),
  data: z.array(Agent),
  pagination: Pagination,
});
export const AgentDeleted = z.object({ id: id("agt", "The deleted agent's id"), deleted: z.literal(true) });
export const AgentDeletedResponse = success(AgentDeleted);

/**
 * Create and update: the agent, and what was kept but will not act yet (a provider not configured here, clients
 * that will not connect).
 */
export const AgentWriteResponse = z
  .object({
    success: z.literal(true),
    data: Agent,
    warnings: z.array(FieldIssue).meta({
      description:
        "What was written but will not act yet: a `modelProvider` this server has no configuration for, naming the variable to set; each `clients[<i>]` naming a platform no connector runs (any but `telegram`, `discord` and `slack`: kept, listed as `inert`), or a run platform whose agent secrets are not set, naming each to set with `PUT /v1/agents/{agentId}/secrets/{name}`. Empty when there is nothing to say.",
    }),
  })
  .meta({ description: "The agent written, and the warnings." });

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
export function narrowToDeployment(input: Record<string, JsonSchema>, served: ServedProviders): void {
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
