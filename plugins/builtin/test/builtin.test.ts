import { Catalogue } from "@agentry/plugin-kit";
import { describe, expect, it } from "vitest";
import { builtinPlugins } from "../src/index.js";

describe("builtinPlugins", () => {
  const catalogue = new Catalogue(builtinPlugins);

  it("makes one catalogue of the five built-in plugins, each with its JSON Schemas", () => {
    expect(catalogue.entries.map((entry) => entry.name)).toEqual([
      "calculator",
      "http",
      "knowledge",
      "mcp",
      "time",
    ]);
    for (const entry of catalogue.entries) {
      expect(entry.configSchema, entry.name).toMatchObject({ type: "object" });
      for (const tool of entry.tools)
        expect(tool.inputSchema, `${entry.name}.${tool.name}`).toMatchObject({ type: "object" });
    }
    expect(catalogue.get("time")?.tools.map((tool) => tool.name)).toEqual([
      "now",
      "add_duration",
      "difference",
    ]);
  });

  it("takes the plugins that have a default config by bare name, and asks the others for theirs", () => {
    expect(catalogue.check(["time", "calculator", "knowledge"])).toEqual([]);
    expect(
      catalogue.check(["http", { name: "mcp", config: { url: "https://mcp.example.com/mcp" } }]),
    ).toEqual([{ field: "plugins[0].config.allow", message: expect.any(String) }]);
    expect(catalogue.check([{ name: "time", config: { timeZone: "Mars/Olympus" } }])).toEqual([
      { field: "plugins[0].config.timeZone", message: expect.stringContaining("IANA") },
    ]);
  });
});
