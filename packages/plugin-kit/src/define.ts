import { z } from "zod";
import type { JsonSchema, Plugin, Tool, ToolContext } from "./types.js";

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,48}$/;
const PLUGIN_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** The JSON Schema of a zod schema as models and the catalogue read it (the input side of transforms). */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  return rest;
}

/** A tool's arguments that its schema refused; the message lists each issue, for the model to correct. */
export class ToolInputError extends Error {
  constructor(readonly issues: z.core.$ZodIssue[]) {
    super(
      `invalid arguments: ${issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`,
    );
    this.name = "ToolInputError";
  }
}

export interface ToolSpec<Input extends z.ZodType, Config> {
  name: string;
  description: string;
  input: Input;
  /** Default 10 s. */
  timeoutMs?: number;
  run(input: z.output<Input>, context: ToolContext<Config>): Promise<unknown>;
}

/** A tool whose arguments are checked by a zod schema before `run` sees them. */
export function defineTool<Input extends z.ZodType, Config = unknown>(
  spec: ToolSpec<Input, Config>,
): Tool<Config> {
  if (!TOOL_NAME.test(spec.name))
    throw new Error(`tool name ${JSON.stringify(spec.name)} is not ${TOOL_NAME}`);
  return {
    name: spec.name,
    description: spec.description,
    inputSchema: jsonSchemaOf(spec.input),
    timeoutMs: spec.timeoutMs ?? 10_000,
    async call(args, context) {
      const parsed = spec.input.safeParse(args);
      if (!parsed.success) throw new ToolInputError(parsed.error.issues);
      return spec.run(parsed.data, context);
    },
  };
}

/** A plugin, its name and tools checked once at start-up. */
export function definePlugin<Config>(plugin: Plugin<Config>): Plugin<Config> {
  if (!PLUGIN_NAME.test(plugin.name)) {
    throw new Error(`plugin name ${JSON.stringify(plugin.name)} is not ${PLUGIN_NAME}`);
  }
  const names = new Set<string>();
  for (const tool of plugin.tools) {
    if (names.has(tool.name)) throw new Error(`plugin ${plugin.name} has two tools named ${tool.name}`);
    names.add(tool.name);
  }
  return plugin;
}
