import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  approvalRequired,
  Catalogue,
  definePlugin,
  defineTool,
  type ToolContext,
  ToolInputError,
} from "../src/index.js";

const echo = definePlugin({
  name: "echo",
  version: "1.0.0",
  description: "Says it back",
  config: z.object({ prefix: z.string().max(10).default("") }),
  secrets: ["token"],
  tools: [
    defineTool({
      name: "say",
      description: "Repeat a text",
      input: z.object({ text: z.string().min(1) }),
      run: async ({ text }, context: ToolContext<{ prefix: string }>) => `${context.config.prefix}${text}`,
    }),
  ],
});
const catalogue = new Catalogue([echo]);
const context = { config: { prefix: "> " } } as ToolContext<{ prefix: string }>;

describe("Catalogue", () => {
  it("lists each plugin with JSON Schemas of its config and tool inputs", () => {
    expect(catalogue.entries).toEqual([
      {
        name: "echo",
        version: "1.0.0",
        description: "Says it back",
        configSchema: expect.objectContaining({ type: "object", properties: { prefix: expect.any(Object) } }),
        secrets: ["token"],
        tools: [
          {
            name: "say",
            description: "Repeat a text",
            inputSchema: expect.objectContaining({ type: "object", required: ["text"] }),
          },
        ],
      },
    ]);
  });

  it("checks requireApproval's names against the plugin's tools, and passes the gate on to the turn", () => {
    expect(
      catalogue.check([
        { name: "echo", requireApproval: ["say"] },
        { name: "echo", requireApproval: true },
      ]),
    ).toEqual([]);
    expect(catalogue.check([{ name: "echo", requireApproval: ["say", "shout"] }])).toEqual([
      {
        field: "plugins[0].requireApproval[1]",
        message: '"shout" is not a tool of plugin "echo" (say)',
      },
    ]);
    const [gated] = catalogue.active([{ name: "echo", requireApproval: ["say"] }]);
    expect(approvalRequired(gated?.requireApproval, "say")).toBe(true);
    expect(approvalRequired(catalogue.active(["echo"])[0]?.requireApproval, "say")).toBe(false);
    expect(
      approvalRequired(
        catalogue.active([{ name: "echo", requireApproval: false }])[0]?.requireApproval,
        "say",
      ),
    ).toBe(false);
  });

  it("accepts bare names, known enabled plugins with valid config, and anything disabled", () => {
    expect(
      catalogue.check([
        "echo",
        { name: "echo", config: { prefix: "x" } },
        { name: "@elizaos/x", enabled: false },
      ]),
    ).toEqual([]);
  });

  it("refuses an enabled plugin not in the catalogue and a config its schema refuses, naming the field", () => {
    expect(
      catalogue.check([{ name: "nope" }, { name: "echo", config: { prefix: "far too long here" } }]),
    ).toEqual([
      {
        field: "plugins[0]",
        message: expect.stringContaining('"nope" is not in the plugin catalogue (echo)'),
      },
      { field: "plugins[1].config.prefix", message: expect.stringContaining("10") },
    ]);
  });

  it("activates only enabled plugins it serves whose config still parses, with defaults applied", () => {
    const active = catalogue.active([
      "echo",
      { name: "echo", enabled: false },
      { name: "gone" },
      { name: "echo", config: { prefix: 5 } },
    ]);
    expect(active.map(({ plugin, config }) => [plugin.name, config])).toEqual([["echo", { prefix: "" }]]);
  });
});

describe("defineTool", () => {
  it("checks arguments before running and says what was wrong", async () => {
    const tool = echo.tools[0]!;
    await expect(tool.call({ text: "hi" }, context)).resolves.toBe("> hi");
    const refused = tool.call({ text: "" }, context);
    await expect(refused).rejects.toBeInstanceOf(ToolInputError);
    await expect(refused).rejects.toThrow(/text: /);
  });

  it("refuses names a model API would refuse", () => {
    expect(() =>
      defineTool({ name: "has space", description: "", input: z.object({}), run: async () => 0 }),
    ).toThrow();
  });
});
