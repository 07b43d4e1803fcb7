import { AGENT_BOUNDS, GENERATION_BOUNDS, PROVIDER_NAMES } from "@agentry/core";
import { z } from "zod";
import { ELIZA_MODEL_PROVIDER_NAMES } from "./providers.js";
import { notBlankText, trimmedText } from "./text.js";

/*
 * elizaOS character files as this service imports them: v0.x (`modelProvider`, `clients`, `lore`, examples
 * spoken by `user`), 1.x (examples spoken by `name`, `secrets` beside `settings`) and the grouped examples of
 * later releases (`[{examples: [...]}]`). One schema accepts all three, since the generations differ only in
 * fields the other ignores or in shapes that cannot be mistaken for each other. Only `name` is required.
 *
 * Fields this schema does not name (v0's `clientConfig`, `twitterProfile`, `imageModelProvider`, an elizaOS `id`)
 * are accepted and kept, untouched, for the export: refusing them would turn away most real v0 files for fields
 * that change nothing here.
 */

/** Bounds of what a character file brings beyond the agent's own fields. */
export const CHARACTER_BOUNDS = {
  /** Items of an array kept in `personality` (the agent's own arrays hold at most `AGENT_BOUNDS.arrayMaxItems`). */
  personalityArrayMaxItems: 1000,
  /** A character file is a request body, and is held to the body limit wherever it comes from. */
  fileMaxBytes: 1024 * 1024,
} as const;

const AGENT_ITEMS = AGENT_BOUNDS.arrayMaxItems;
const PERSONALITY_ITEMS = CHARACTER_BOUNDS.personalityArrayMaxItems;
const count = (n: number) => n.toLocaleString("en-US");

const text = z.string({ error: "must be a string" });

const json = z.json({ error: "must be JSON" });

/** A JSON object of any content, as `settings` and plugin configurations are. */
const anyObject = (what: string) => z.record(z.string(), json, { error: `must be a JSON object (${what})` });

/** A string the agent keeps in one of its own arrays (`bio`, `knowledge`, `goals`, plugin and client names). */
const agentString = notBlankText(AGENT_BOUNDS.stringItemMaxLength);

const agentStrings = () =>
  z
    .array(agentString, { error: "must be an array of strings" })
    .max(AGENT_ITEMS, `must hold at most ${AGENT_ITEMS} items`);

const agentList = (description: string) => agentStrings().meta({ description });

const personalityList = (description: string) =>
  z
    .array(text, { error: "must be an array of strings" })
    .max(PERSONALITY_ITEMS, `must hold at most ${count(PERSONALITY_ITEMS)} items`)
    .meta({ description });

/** Whether an object names `one` or, failing that, `other`, as JSON Schema states it (`if`/`then`). */
const oneOfRequired = (one: string, other: string) => {
  // Each `required` names its property beside it, as strict JSON Schema validators (Ajv's strict mode) ask.
  const then = { required: [other], properties: { [other]: {} } };
  return { if: { not: { required: [one], properties: { [one]: {} } } }, then };
};

export const messageContent = z
  .looseObject(
    {
      text: text.optional().meta({ description: "What is said." }),
      action: text.optional().meta({ description: "v0.x: the action the reply triggers, by name." }),
      actions: z
        .array(text, { error: "must be an array of strings" })
        .optional()
        .meta({ description: "1.x: the actions the reply triggers, by name." }),
    },
    { error: "must be a JSON object" },
  )
  .meta({ description: "The message: its `text`, and whatever else elizaOS records with it (kept)." });

/** One message of an example conversation: spoken by `name` (1.x) or `user` (v0.x). */
export const exampleMessage = z
  .looseObject(
    {
      name: text.optional().meta({
        description:
          "1.x: who speaks, the character's name or a placeholder for the other party (`{{name1}}`, `{{user1}}`).",
      }),
      user: text.optional().meta({ description: "v0.x: who speaks, as `name` in 1.x." }),
      content: messageContent,
    },
    { error: "must be a JSON object {name, content}" },
  )
  .refine((message) => message.name !== undefined || message.user !== undefined, {
    message: "must name its speaker in 'name' (or, in v0.x files, 'user')",
  })
  .meta({ description: "One message of an example conversation.", ...oneOfRequired("name", "user") });

const exampleConversation = z
  .array(exampleMessage, { error: "must be an array of messages" })
  .max(PERSONALITY_ITEMS, `must hold at most ${count(PERSONALITY_ITEMS)} messages`);

const exampleGroup = z
  .strictObject({ examples: exampleConversation }, { error: "must be a JSON object {examples}" })
  .meta({ description: "An example conversation in the grouped form of later releases." });

export const messageExamples = z
  .array(
    z.union([exampleConversation, exampleGroup], {
      error: "must be an array of messages, or an object {examples: [messages]}",
    }),
    { error: "must be an array of example conversations" },
  )
  .max(PERSONALITY_ITEMS, `must hold at most ${count(PERSONALITY_ITEMS)} conversations`)
  .meta({
    description:
      "Example conversations: each an array of messages, or `{examples: [messages]}`. Kept in `personality.messageExamples` as arrays of `{name, content}` (a v0.x `user` becomes `name`); the first few that fit the prompt budget are shown to the model as examples of the character's voice.",
  });

/** A file or folder the elizaOS runtime would read knowledge from; no file is fetched here. */
export const knowledgeSource = z
  .looseObject(
    {
      path: text.optional().meta({ description: "A file." }),
      directory: z
        .union([text, anyObject("directory")], { error: "must be a path or a JSON object" })
        .optional()
        .meta({ description: "A folder." }),
      shared: z.boolean({ error: "must be a boolean" }).optional(),
    },
    { error: "must be a JSON object" },
  )
  .refine((source) => source.path !== undefined || source.directory !== undefined, {
    message: "must name a 'path' or a 'directory'",
  })
  .meta({ description: "A file or folder reference.", ...oneOfRequired("path", "directory") });

export const knowledge = z
  .array(
    z.union([agentString, knowledgeSource], {
      error: "must be a string or a file or folder reference {path} or {directory}",
    }),
    { error: "must be an array" },
  )
  .max(AGENT_ITEMS, `must hold at most ${AGENT_ITEMS} items`)
  .meta({
    description: `Facts (strings), which become the agent's \`knowledge\`, and file or folder references (\`{path}\`, \`{directory}\`), kept in \`personality.knowledgeSources\` with their position and not fetched. At most ${AGENT_ITEMS} items together.`,
  });

export const style = z
  .looseObject(
    {
      all: personalityList(
        "Guidelines for every reply; they become the agent's response guidelines.",
      ).optional(),
      chat: personalityList(
        "Guidelines for chat replies; they become the agent's response guidelines.",
      ).optional(),
      post: personalityList("Guidelines for social media posts; kept for the export.").optional(),
    },
    { error: "must be a JSON object {all, chat, post}" },
  )
  .meta({ description: "How the character writes. Kept in `personality.style`." });

const secretValue = z.union([text, z.number(), z.boolean()], {
  error: "must be a string, a number or a boolean",
});

export const secrets = z
  .record(z.string(), secretValue, { error: "must be a JSON object of names and values" })
  .meta({
    description:
      "Secret values by name (API keys). Stored in the agent's `settings.secrets`, which no read, event or export ever returns.",
  });

/** An agent's plugin, as `POST /v1/agents` takes it: a name, or `{name, enabled?, config?, requireApproval?}`. */
export const agentPlugin = z.union(
  [
    agentString,
    z.strictObject({
      name: agentString,
      enabled: z.boolean({ error: "must be a boolean" }).optional(),
      config: anyObject("plugin configuration").optional(),
      requireApproval: z
        .union([z.boolean(), z.array(agentString, { error: "must be an array of tool names" })], {
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

/** An agent's client, as `POST /v1/agents` takes it: a platform name, or an object with a `type`. */
export const agentClient = z.union([agentString, z.looseObject({ type: agentString })], {
  error: "must be a platform name or an object with a 'type'",
});

/**
 * What an export adds under `settings.agentry` so that nothing of the agent is lost in a format without a place
 * for it; an import puts each part back. Unknown keys are refused: the namespace is this service's own, and a
 * mistyped key would otherwise vanish silently.
 */
export const agentrySettings = z
  .strictObject(
    {
      modelProvider: z
        .enum(PROVIDER_NAMES, { error: `must be one of: ${PROVIDER_NAMES.join(", ")}` })
        .optional()
        .meta({ description: "The agent's `modelProvider`; preferred to a top-level `modelProvider`." }),
      defaultModel: z.literal(true, { error: "must be true" }).optional().meta({
        description:
          "The agent uses the server's default provider and model; `settings.model` is then the one its file named, kept in `personality.sourceModel`.",
      }),
      goals: agentList("The agent's `goals`.").optional(),
      clients: z
        .array(agentClient, { error: "must be an array" })
        .max(AGENT_ITEMS, `must hold at most ${AGENT_ITEMS} items`)
        .optional()
        .meta({ description: "The agent's `clients`; preferred to a top-level `clients`." }),
      plugins: z
        .array(agentPlugin, { error: "must be an array" })
        .max(AGENT_ITEMS, `must hold at most ${AGENT_ITEMS} items`)
        .optional()
        .meta({
          description:
            "The agent's plugins with their `enabled` and `config`; each is restored for the name `plugins` lists.",
        }),
      personality: anyObject("personality").optional().meta({
        description:
          "Keys of the agent's `personality` that the file has no field for (`lore`, `sourceModelProvider`, `extraFields`, the agent's own traits); restored as they are.",
      }),
      settings: z
        .strictObject(
          { model: json.optional(), agentry: json.optional() },
          { error: "must be a JSON object" },
        )
        .optional()
        .meta({
          description:
            "The agent's own `settings.model` and `settings.agentry`, which the file uses for something else.",
        }),
    },
    { error: "must be a JSON object" },
  )
  .meta({ description: "What an Agentry export keeps of the agent beyond the elizaOS fields." });

const { temperature, maxTokens } = GENERATION_BOUNDS;
const temperatureIssue = `must be a number from ${temperature.min} to ${temperature.max}`;
const maxTokensIssue = `must be an integer from ${maxTokens.min} to ${maxTokens.max}`;

export const characterSettings = z
  .looseObject(
    {
      model: trimmedText(AGENT_BOUNDS.modelMaxLength)
        .optional()
        .meta({
          description: "The model, which becomes the agent's `model` (trimmed).",
          examples: ["gpt-4o-mini"],
        }),
      secrets: secrets.optional(),
      voice: json
        .optional()
        .meta({ description: "Voice settings; kept in the agent's settings as they are." }),
      temperature: z
        .number({ error: temperatureIssue })
        .min(temperature.min, temperatureIssue)
        .max(temperature.max, temperatureIssue)
        .nullable()
        .optional()
        .meta({
          description: `Sampling temperature, as an agent's: ${temperature.min} to ${temperature.max}.`,
        }),
      maxTokens: z
        .number({ error: maxTokensIssue })
        .int(maxTokensIssue)
        .min(maxTokens.min, maxTokensIssue)
        .max(maxTokens.max, maxTokensIssue)
        .nullable()
        .optional()
        .meta({
          description: `The most tokens a reply may have, as an agent's: ${maxTokens.min} to ${maxTokens.max}.`,
        }),
      agentry: agentrySettings.optional(),
    },
    { error: "must be a JSON object" },
  )
  .meta({
    description:
      "Settings. `model` becomes the agent's `model`, `secrets` its write-only `settings.secrets`, `agentry` is read back from an Agentry export; every other key stays in the agent's `settings` as it is.",
  });

export const ACCEPTED_MODEL_PROVIDERS = ELIZA_MODEL_PROVIDER_NAMES;

export const modelProvider = z
  .enum(ACCEPTED_MODEL_PROVIDERS, {
    error: `must be one of: ${ACCEPTED_MODEL_PROVIDERS.join(", ")}`,
  })
  .meta({
    description:
      "v0.x: the model provider. `anthropic` stays `anthropic`, `llama_local` becomes `local`, every other accepted name serves OpenAI's Chat Completions API and becomes `openai`. The name given is kept in `personality.sourceModelProvider`.",
  });

/** The fields this service maps; any other field of a file is kept in `personality.extraFields`. */
export const characterFields = {
  name: trimmedText(AGENT_BOUNDS.nameMaxLength).meta({
    description: `The agent's name: 1 to ${AGENT_BOUNDS.nameMaxLength} characters once trimmed.`,
    examples: ["Eliza"],
  }),
  username: text.optional().meta({ description: "A handle; kept in `personality.username`." }),
  system: text.optional().meta({
    description: "A system prompt; kept in `personality.system`, it replaces the prompt's opening line.",
  }),
  bio: z
    .union([agentString, agentStrings()], { error: "must be a string or an array of strings" })
    .optional()
    .meta({
      description: `Who the character is: one string (one item) or up to ${AGENT_ITEMS} strings. Becomes the agent's \`bio\`.`,
    }),
  lore: personalityList(
    "v0.x: background stories; kept in `personality.lore` and given to the model.",
  ).optional(),
  topics: personalityList("What the character talks about; kept in `personality.topics`.").optional(),
  adjectives: personalityList("Traits; kept in `personality.adjectives`.").optional(),
  style: style.optional(),
  messageExamples: messageExamples.optional(),
  postExamples: personalityList("Example social media posts; kept in `personality.postExamples`.").optional(),
  templates: z
    .record(z.string(), text, { error: "must be a JSON object of template texts" })
    .optional()
    .meta({ description: "elizaOS prompt templates by name; kept in `personality.templates`, unused here." }),
  knowledge: knowledge.optional(),
  plugins: agentList(
    "Plugins by package name. A name in this service's plugin catalogue becomes an enabled plugin; any other (`@elizaos/plugin-sql`) is kept as `{name, enabled: false}` with a warning.",
  ).optional(),
  clients: agentList(
    "v0.x: platforms (`discord`, `telegram`); they become the agent's `clients`.",
  ).optional(),
  modelProvider: modelProvider.optional(),
  settings: characterSettings.optional(),
  secrets: secrets.optional(),
};

export const characterFile = z.looseObject(characterFields, { error: "must be a JSON object" }).meta({
  title: "elizaOS character file",
  description:
    "An elizaOS character file (v0.x, 1.x, or with grouped `messageExamples`), as `POST /v1/agents/import` takes it. Only `name` is required. Fields not listed here are kept, untouched, in `personality.extraFields` for the export, with a warning.",
});

export type CharacterFile = z.infer<typeof characterFile>;

/** The names of the fields `characterFile` lists. */
export const CHARACTER_FIELD_NAMES = Object.keys(characterFields);

/**
 * The file an export writes: an elizaOS 1.x character file, with only the fields 1.x knows at the top (its loader
 * refuses others); what 1.x has no field for is under `settings.agentry`.
 */
export const exportedCharacterFile = z
  .object({
    name: z.string().meta({ description: "The agent's name." }),
    username: text.optional(),
    system: text.optional(),
    bio: z.array(z.string()).meta({ description: "The agent's `bio`." }),
    topics: z.array(z.string()).optional(),
    adjectives: z.array(z.string()).optional(),
    style: style.optional(),
    messageExamples: z
      .array(z.array(exampleMessage))
      .optional()
      .meta({ description: "Example conversations, as arrays of `{name, content}`." }),
    postExamples: z.array(z.string()).optional(),
    knowledge: z
      .array(z.union([z.string(), knowledgeSource]))
      .optional()
      .meta({ description: "The agent's knowledge, with its file and folder references back in place." }),
    templates: z.record(z.string(), z.string()).optional(),
    plugins: z.array(z.string()).meta({ description: "The name of every plugin of the agent." }),
    settings: z
      .looseObject({
        model: z.string().optional().meta({ description: "The agent's `model`." }),
        secrets: z.strictObject({}).meta({ description: "Always empty: secrets never leave." }),
        agentry: agentrySettings.optional(),
      })
      .meta({ description: "The agent's settings, without its secrets." }),
    secrets: z.strictObject({}).meta({ description: "Always empty: secrets never leave." }),
  })
  .meta({
    title: "elizaOS character file (export)",
    description:
      "An agent as an elizaOS 1.x character file. Importing it gives an agent equal to this one in every field but its id, times and `apiEndpoint`.",
  });

export type ExportedCharacterFile = z.infer<typeof exportedCharacterFile>;
