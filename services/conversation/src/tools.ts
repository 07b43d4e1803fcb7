import { createHash } from "node:crypto";
import type { Logger } from "@agentry/logging";
import {
  approvalRequired,
  type Catalogue,
  type DocumentHit,
  type GuardedFetch,
  normalisePluginSetting,
  type Plugin,
  type PluginHost,
  type Tool,
  type ToolContext,
} from "@agentry/plugin-kit";
import type { PluginService } from "@agentry/proto";
import type { Client } from "@connectrpc/connect";
import { sanitise } from "./providers/errors.js";
import type { ModelTool, ModelToolCall } from "./providers/types.js";

/** What a turn's tools need of the deployment: the installed plugins, and the registry's PluginService. */
export interface PluginRuntime {
  catalogue: Catalogue;
  /** RevealSecrets (the names the active plugins declare) and SearchKnowledge. */
  service: Pick<Client<typeof PluginService>, "revealSecrets" | "searchKnowledge">;
  /** Outbound HTTP for the tools, through the outbound guard. */
  fetch: GuardedFetch;
  /** The tools' clock; tests may stand a fixed one in. */
  now?: () => Date;
}

/** One tool call of a turn with its outcome, as the reply and the history carry it. */
export interface ToolCallRecord {
  id: string;
  /** As the model called it: `<plugin>__<tool>`. */
  name: string;
  /** JSON text, as the model wrote it (not necessarily valid JSON). */
  arguments: string;
  ok: boolean;
  /** The tool's answer as JSON text, when `ok`. */
  output?: string;
  /** Why it failed, when not `ok`: safe to show (secrets masked). */
  error?: string;
}

/** The most characters of a tool's answer given to the model; a longer answer is the call's failure. */
export const MAX_TOOL_OUTPUT = 100_000;
/** How long a plugin may take to list a turn's tools (an MCP server's list), and the registry to reveal secrets. */
const PREPARE_TIMEOUT_MS = 10_000;
const MODEL_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

interface Bound {
  plugin: Plugin;
  tool: Tool;
  config: unknown;
  secrets: Readonly<Record<string, string>>;
  /** Its calls wait for a person's approval (the plugin item's `requireApproval`). */
  gated: boolean;
}

/**
 * The tools of one turn: the agent's active plugins' tools, named to the model `<plugin>__<tool>`, each run
 * with its plugin's config and secrets under a deadline. A failing, hanging or unknown tool is an outcome to
 * report to the model, never the turn's failure.
 */
export class TurnTools {
  /** The tools as the model is offered them. */
  readonly specs: ModelTool[];

  private constructor(
    private readonly byName: ReadonlyMap<string, Bound>,
    private readonly base: { accountId: string; agentId: string; host: PluginHost },
    /** Every secret value revealed for the turn: masked out of every error message. */
    private readonly secretValues: readonly string[],
  ) {
    this.specs = [...byName].map(([name, { tool }]) => ({
      name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    }));
  }

  /**
   * The tools of an agent's turn, or undefined when it has none (no plugin enabled, none installed): the turn
   * then goes as it would without plugins. Secrets are revealed once, for the names the active plugins declare.
   */
  static async prepare(
    runtime: PluginRuntime | undefined,
    agent: {
      accountId: string;
      agentId: string;
      plugins: readonly unknown[];
      /** The agent's document chunks that match a query, best first (the store's full-text search). */
      searchDocuments: (query: string, limit: number) => Promise<DocumentHit[]>;
    },
    signal: AbortSignal,
    log: Logger,
  ): Promise<TurnTools | undefined> {
    if (!runtime || agent.plugins.length === 0) return undefined;
    const active = runtime.catalogue.active(agent.plugins);
    if (active.length === 0) return undefined;
    const { accountId, agentId } = agent;
    const revealed = await revealSecrets(runtime, accountId, agentId, active, signal, log);
    const host: PluginHost = {
      now: runtime.now ?? (() => new Date()),
      async searchKnowledge(query, limit, callSignal) {
        const { hits } = await runtime.service.searchKnowledge(
          { accountId, agentId, query, limit },
          { signal: callSignal },
        );
        return hits.map((hit) => ({ index: hit.index, text: hit.text }));
      },
      searchDocuments: (query, limit) => agent.searchDocuments(query, limit),
      fetch: runtime.fetch,
    };
    const byName = new Map<string, Bound>();
    const seen = new Set<string>();
    for (const { plugin, config, requireApproval } of active) {
      if (seen.has(plugin.name)) continue;
      seen.add(plugin.name);
      const secrets = Object.fromEntries(
        secretNamesOf(plugin, config)
          .filter((name) => name in revealed)
          .map((name) => [name, revealed[name]!]),
      );
      const tools = await toolsOf(plugin, { accountId, agentId, config, secrets, signal, host }, log);
      for (const tool of tools) {
        const gated = approvalRequired(requireApproval, tool.name);
        byName.set(modelToolName(plugin.name, tool.name), { plugin, tool, config, secrets, gated });
      }
    }
    if (byName.size === 0) return undefined;
    return new TurnTools(byName, { accountId, agentId, host }, Object.values(revealed));
  }

  /** Whether a call of the tool the model names `name` waits for a person's approval before it runs. */
  needsApproval(name: string): boolean {
    return this.byName.get(name)?.gated ?? false;
  }

  /**
   * Runs one call the model asked for, until it answers or its deadline: the sooner of the tool's own timeout
   * and the turn's deadline. `signal` (the caller's) aborts it too. Never rejects.
   */
  async run(call: ModelToolCall, signal: AbortSignal, turnDeadline: number): Promise<ToolCallRecord> {
    const record = { id: call.id, name: call.name, arguments: call.arguments };
    const bound = this.byName.get(call.name);
    if (!bound) {
      const known = [...this.byName.keys()].join(", ");
      return {
        ...record,
        ok: false,
        error: `No tool is named ${JSON.stringify(call.name)}; the tools are: ${known}.`,
      };
    }
    let args: unknown;
    try {
      args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
    } catch {
      return { ...record, ok: false, error: "The arguments are not valid JSON." };
    }
    const timeoutMs = Math.max(0, Math.min(bound.tool.timeoutMs, turnDeadline - Date.now()));
    const deadline = Date.now() + timeoutMs;
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(), timeoutMs);
    const callSignal = AbortSignal.any([signal, timer.signal]);
    const context: ToolContext = {
      accountId: this.base.accountId,
      agentId: this.base.agentId,
      config: bound.config,
      secrets: bound.secrets,
      signal: callSignal,
      deadline,
      host: this.base.host,
    };
    try {
      // A tool that ignores its signal is left behind at its deadline: the turn does not wait for it.
      const output = await Promise.race([bound.tool.call(args, context), rejectOnAbort(callSignal)]);
      return { ...record, ...this.answer(output) };
    } catch (error) {
      if (timer.signal.aborted) {
        return { ...record, ok: false, error: `The tool did not answer within ${timeoutMs} ms.` };
      }
      if (signal.aborted) return { ...record, ok: false, error: "The turn was cancelled." };
      const message = error instanceof Error ? error.message : String(error);
      return { ...record, ok: false, error: sanitise(message, this.secretValues) || "The tool failed." };
    } finally {
      clearTimeout(timeout);
    }
  }

  private answer(output: unknown): { ok: true; output: string } | { ok: false; error: string } {
    let text: string | undefined;
    try {
      text = JSON.stringify(output ?? null);
    } catch {
      text = undefined;
    }
    if (text === undefined) return { ok: false, error: "The tool's answer is not JSON." };
    // A secret never reaches the model, the reply or the history, even in a tool's answer.
    for (const secret of this.secretValues) {
      if (!secret) continue;
      text = text.split(secret).join("[redacted]");
      const escaped = JSON.stringify(secret).slice(1, -1);
      if (escaped !== secret) text = text.split(escaped).join("[redacted]");
    }
    if (text.length > MAX_TOOL_OUTPUT) {
      return {
        ok: false,
        error: `The tool's answer is too long (${text.length} characters; at most ${MAX_TOOL_OUTPUT}).`,
      };
    }
    return { ok: true, output: text };
  }
}

/** Whether any enabled plugin item of an agent has tools that wait for a person's approval (`requireApproval`). */
export function awaitsApprovals(plugins: readonly unknown[]): boolean {
  return plugins.some((item) => {
    const setting = normalisePluginSetting(item);
    return setting?.enabled === true && setting.requireApproval !== undefined;
  });
}

/**
 * A tool's name for the model: `<plugin>__<tool>`, unambiguous because plugin names have no underscore. A name
 * longer than the providers take (64) keeps its start and ends with a hash of the whole.
 */
export function modelToolName(plugin: string, tool: string): string {
  const name = `${plugin}__${tool}`;
  if (MODEL_TOOL_NAME.test(name)) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 8);
  return `${name.slice(0, 55)}_${hash}`;
}

/** The secrets a plugin reads with an agent's config: those its config names (`secretsFor`), else its own list. */
function secretNamesOf(plugin: Plugin, config: unknown): readonly string[] {
  return plugin.secretsFor ? plugin.secretsFor(config) : plugin.secrets;
}

async function revealSecrets(
  runtime: PluginRuntime,
  accountId: string,
  agentId: string,
  active: readonly { plugin: Plugin; config: unknown }[],
  signal: AbortSignal,
  log: Logger,
): Promise<Record<string, string>> {
  const names = [...new Set(active.flatMap(({ plugin, config }) => secretNamesOf(plugin, config)))].sort();
  if (names.length === 0) return {};
  try {
    const { values } = await runtime.service.revealSecrets(
      { accountId, agentId, names },
      { signal, timeoutMs: PREPARE_TIMEOUT_MS },
    );
    return { ...values };
  } catch (error) {
    // The tools that need a secret fail and say so to the model; the turn goes on.
    log.warn(
      { err: error instanceof Error ? error.message : String(error) },
      "could not read the agent's secrets",
    );
    return {};
  }
}

async function toolsOf(
  plugin: Plugin,
  context: Omit<ToolContext, "deadline">,
  log: Logger,
): Promise<readonly Tool[]> {
  if (!plugin.toolsFor) return plugin.tools;
  const signal = AbortSignal.any([context.signal, AbortSignal.timeout(PREPARE_TIMEOUT_MS)]);
  try {
    return await Promise.race([plugin.toolsFor({ ...context, signal }), rejectOnAbort(signal)]);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.warn(
      { plugin: plugin.name, err: sanitise(message, Object.values(context.secrets)) },
      "plugin listed no tools",
    );
    return [];
  }
}

/** Rejects once the signal aborts (with its reason); never settles otherwise. */
function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
