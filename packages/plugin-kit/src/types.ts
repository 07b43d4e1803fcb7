import type { z } from "zod";

/** A JSON Schema document (draft 2020-12), as published in the catalogue and given to models. */
export type JsonSchema = Record<string, unknown>;

/** One entry of an agent's knowledge that matched a search, best first. */
export interface KnowledgeHit {
  /** The entry's position in the agent's `knowledge` list. */
  index: number;
  text: string;
}

/** A chunk of one of the agent's documents that matched a search (docs/api/documents.md). */
export interface DocumentHit {
  documentId: string;
  title: string;
  /** The chunk's position in the document, from 0. */
  chunk: number;
  text: string;
}

/** A `fetch` whose every call passes the outbound guard (https only, public addresses only, no redirects). */
export type GuardedFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** What the host process offers every tool call. */
export interface PluginHost {
  /** The current time; tests may stand a fixed clock in. */
  now(): Date;
  /** Full-text search over the calling agent's knowledge entries. */
  searchKnowledge(query: string, limit: number, signal: AbortSignal): Promise<KnowledgeHit[]>;
  /** Full-text search over the chunks of the calling agent's documents, best first. */
  searchDocuments(query: string, limit: number, signal: AbortSignal): Promise<DocumentHit[]>;
  /** Outbound HTTP made for users; a refused destination rejects with an error saying why. */
  fetch: GuardedFetch;
}

/** Everything one tool call gets besides its arguments. */
export interface ToolContext<Config = unknown> {
  readonly accountId: string;
  readonly agentId: string;
  /** The agent's config of this plugin, as the plugin's schema parsed it (defaults applied). */
  readonly config: Config;
  /** The agent's secrets that this plugin reads (`secrets`, or `secretsFor` its config), by name; one not set is absent. */
  readonly secrets: Readonly<Record<string, string>>;
  /** Aborts at the call's deadline, at the turn's, or when the client leaves: stop work and settle promptly. */
  readonly signal: AbortSignal;
  /** Epoch milliseconds by which the call must have answered. */
  readonly deadline: number;
  readonly host: PluginHost;
}

/**
 * A tool the model may call. Its answer is any JSON value; a thrown error is reported to the model as the
 * tool's failure (its message, so it must not carry secrets), never as the turn's.
 */
export interface Tool<Config = unknown> {
  /** `^[a-zA-Z0-9_-]{1,48}$`, unique within its plugin. */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** The most this tool may take; the host caps it by the turn's deadline. */
  readonly timeoutMs: number;
  call(args: unknown, context: ToolContext<Config>): Promise<unknown>;
}

/** A plugin: what the catalogue shows of it, and its tools. */
export interface Plugin<Config = unknown> {
  /** `^[a-z][a-z0-9-]{0,31}$`, unique in the catalogue. */
  readonly name: string;
  readonly version: string;
  readonly description: string;
  /** Parses an agent's `config` for this plugin; `{}` must parse when the plugin has a default config. */
  readonly config: z.ZodType<Config>;
  /** Names of the agent secrets this plugin reads. */
  readonly secrets: readonly string[];
  /**
   * The secrets one agent's config makes it read, when its config names them (the `mcp` plugin's `authSecret`);
   * defaults to `secrets`. The host reveals these for a turn's `ToolContext.secrets`.
   */
  secretsFor?(config: Config): readonly string[];
  /** The tools the catalogue announces. */
  readonly tools: readonly Tool<Config>[];
  /**
   * The tools of one agent's turn, when they depend on its config (an MCP server's tools); defaults to `tools`.
   * Called once per turn, before the model's first call.
   */
  toolsFor?(context: Omit<ToolContext<Config>, "deadline">): Promise<readonly Tool<Config>[]>;
}
