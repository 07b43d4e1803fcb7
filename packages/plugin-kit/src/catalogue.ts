import { jsonSchemaOf } from "./define.js";
import type { JsonSchema, Plugin } from "./types.js";

/** One plugin as `GET /v1/plugins` shows it. */
export interface CatalogueEntry {
  name: string;
  version: string;
  description: string;
  configSchema: JsonSchema;
  secrets: string[];
  tools: { name: string; description: string; inputSchema: JsonSchema }[];
}

/** One item of an agent's `plugins`, normalised: a bare name is `{name, enabled: true, config: {}}`. */
export interface PluginSetting {
  name: string;
  enabled: boolean;
  config: Record<string, unknown>;
  /**
   * The tools whose calls wait for a person's approval before they run (docs/api/plugins-and-tools.md, "Tool
   * approvals"): `true` for all the plugin's tools, or their names; absent for none.
   */
  requireApproval?: true | string[];
}

/** Whether a plugin item's `requireApproval` holds the plugin's tool `tool` (its own name, not the model's). */
export function approvalRequired(requireApproval: PluginSetting["requireApproval"], tool: string): boolean {
  return requireApproval === true || (requireApproval?.includes(tool) ?? false);
}

/** Why one item of an agent's `plugins` was refused: `field` is its path from `plugins`, e.g. `plugins[2].config.url`. */
export interface PluginSettingProblem {
  field: string;
  message: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The plugins this deployment serves. Built once by each composition root from the installed plugins. */
export class Catalogue {
  private readonly byName: ReadonlyMap<string, Plugin>;
  /** As `GET /v1/plugins` lists them, sorted by name. */
  readonly entries: readonly CatalogueEntry[];

  constructor(plugins: readonly Plugin[]) {
    const byName = new Map<string, Plugin>();
    for (const plugin of plugins) {
      if (byName.has(plugin.name)) throw new Error(`two plugins are named ${plugin.name}`);
      byName.set(plugin.name, plugin);
    }
    this.byName = byName;
    this.entries = [...byName.values()]
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((plugin) => ({
        name: plugin.name,
        version: plugin.version,
        description: plugin.description,
        configSchema: jsonSchemaOf(plugin.config),
        secrets: [...plugin.secrets],
        tools: plugin.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
      }));
  }

  get(name: string): Plugin | undefined {
    return this.byName.get(name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /**
   * Checks an agent's `plugins` as create and update receive them (already shaped as names or
   * `{name, enabled?, config?}` objects): an enabled plugin must be in the catalogue and its config must parse.
   * A disabled one is kept as given, known or not.
   */
  check(plugins: readonly unknown[]): PluginSettingProblem[] {
    const problems: PluginSettingProblem[] = [];
    plugins.forEach((item, i) => {
      const setting = normalisePluginSetting(item);
      if (!setting?.enabled) return;
      const plugin = this.byName.get(setting.name);
      if (!plugin) {
        const known = this.entries.map((entry) => entry.name).join(", ");
        problems.push({
          field: `plugins[${i}]`,
          message: `${JSON.stringify(setting.name)} is not in the plugin catalogue (${known || "none installed"}); set enabled: false to keep it inert`,
        });
        return;
      }
      // A plugin whose tools depend on its config (an MCP server's) has no names to check them against.
      if (Array.isArray(setting.requireApproval) && !plugin.toolsFor) {
        const tools = plugin.tools.map((tool) => tool.name);
        setting.requireApproval.forEach((name, j) => {
          if (tools.includes(name)) return;
          problems.push({
            field: `plugins[${i}].requireApproval[${j}]`,
            message: `${JSON.stringify(name)} is not a tool of plugin ${JSON.stringify(plugin.name)} (${tools.join(", ") || "it has none"})`,
          });
        });
      }
      const parsed = plugin.config.safeParse(setting.config);
      if (parsed.success) return;
      for (const issue of parsed.error.issues) {
        const path = issue.path
          .map((part) => (typeof part === "number" ? `[${part}]` : `.${String(part)}`))
          .join("");
        problems.push({ field: `plugins[${i}].config${path}`, message: issue.message });
      }
    });
    return problems;
  }

  /**
   * The plugins an agent's turn uses, in its order, each with its parsed config: enabled, in the catalogue, and
   * with a config that still parses (an agent stored before a plugin changed keeps it, inert).
   */
  active(
    plugins: readonly unknown[],
  ): { plugin: Plugin; config: unknown; requireApproval?: true | string[] }[] {
    const active: { plugin: Plugin; config: unknown; requireApproval?: true | string[] }[] = [];
    for (const item of plugins) {
      const setting = normalisePluginSetting(item);
      const plugin = setting?.enabled ? this.byName.get(setting.name) : undefined;
      if (!plugin || !setting) continue;
      const parsed = plugin.config.safeParse(setting.config);
      if (!parsed.success) continue;
      active.push({
        plugin,
        config: parsed.data,
        ...(setting.requireApproval ? { requireApproval: setting.requireApproval } : {}),
      });
    }
    return active;
  }
}

/** A bare name or `{name, enabled?, config?}` as one shape; undefined for anything else. */
export function normalisePluginSetting(item: unknown): PluginSetting | undefined {
  if (typeof item === "string") return { name: item, enabled: true, config: {} };
  if (!isObject(item) || typeof item.name !== "string") return undefined;
  const gate = item.requireApproval;
  const requireApproval =
    gate === true
      ? true
      : Array.isArray(gate) && gate.length > 0
        ? gate.filter((name): name is string => typeof name === "string")
        : undefined;
  return {
    name: item.name,
    enabled: item.enabled !== false,
    config: isObject(item.config) ? item.config : {},
    ...(requireApproval ? { requireApproval } : {}),
  };
}
