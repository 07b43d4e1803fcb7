import { z } from "zod";
import { timestamp } from "./common.schemas.js";

/* The plugin catalogue and agents' secrets (docs/api/plugins-and-tools.md); a secret's value is never shown. */

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

export const SecretDeleted = z.object({
  name: z.string().meta({ description: "The deleted secret's name.", examples: ["MCP_TOKEN"] }),
  deleted: z.literal(true),
});
