import { type RequestOptions, readTextFile, type Transport } from "../core.js";
import type { FieldIssue } from "../errors.js";
import { AgentryError } from "../errors.js";
import { Page, PagePromise } from "../pagination.js";
import type {
  Agent,
  AgentCreateParams,
  AgentDeleted,
  AgentDraft,
  AgentListParams,
  AgentUpdateParams,
  CharacterFile,
  CharacterImport,
  CharacterImportParams,
  CharacterImportPreview,
  ExportedCharacterFile,
  Pagination,
} from "../types.js";
import { AgentClients } from "./clients.js";
import { Conversations } from "./conversations.js";
import { Documents } from "./documents.js";
import { Memories } from "./memories.js";
import { Messages } from "./messages.js";
import { idSegment } from "./path.js";
import { AgentRuns } from "./runs.js";
import { Schedules } from "./schedules.js";
import { AgentSecrets } from "./secrets.js";
import { AgentUsage } from "./usage.js";

/** The options of an agent's update or delete, which may be made conditional on the agent's version. */
export interface ConditionalRequestOptions extends RequestOptions {
  /**
   * The agent's ETag as last read, or its `updatedAt` (its version): sent as `If-Match`, so the write happens only
   * if the agent has not changed since; otherwise `ConflictError` 412 `PRECONDITION_FAILED` and nothing changes
   * (read the agent again and decide).
   */
  ifMatch?: string | undefined;
}

/** The request options with `If-Match` for `ifMatch` (an `updatedAt` is sent as its ETag, `W/"<updatedAt>"`). */
function conditional(options: ConditionalRequestOptions | undefined): RequestOptions | undefined {
  if (options?.ifMatch === undefined) return options;
  const { ifMatch, ...rest } = options;
  const tag =
    ifMatch === "*" || ifMatch.startsWith('"') || ifMatch.startsWith("W/") ? ifMatch : `W/"${ifMatch}"`;
  return { ...rest, headers: { "if-match": tag, ...rest.headers } };
}

interface DataEnvelope<T> {
  data: T;
}

interface ListEnvelope<T> {
  data: T[];
  pagination: Pagination;
}

/**
 * Agents: create, list, read, update and delete, import and export as character files; `messages` talks to them
 * and reads their history, `conversations` and `usage` tell what they did, `secrets` holds what their plugins
 * read.
 */
export class Agents {
  /** Messages to an agent, answered at once or streamed, and the stored ones. */
  readonly messages: Messages;
  /** An agent's conversations, by user and room. */
  readonly conversations: Conversations;
  /** What the agent remembers of its users. */
  readonly memories: Memories;
  /** The files the agent answers from. */
  readonly documents: Documents;
  /** An agent's usage figures. */
  readonly usage: AgentUsage;
  /** An agent's secrets, which its plugins read (scope `plugins:manage`). */
  readonly secrets: AgentSecrets;
  /** How the agent's platform clients (Telegram, Discord, Slack) stand (scope `agents:read`). */
  readonly clients: AgentClients;
  /** The agent's runs: listed (scope `history:read`) and all cancelled at once (scope `agents:write`). */
  readonly runs: AgentRuns;
  /** The agent's schedules (`agents:write`). */
  readonly schedules: Schedules;
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
    this.messages = new Messages(transport);
    this.conversations = new Conversations(transport);
    this.memories = new Memories(transport);
    this.documents = new Documents(transport);
    this.usage = new AgentUsage(transport);
    this.secrets = new AgentSecrets(transport);
    this.clients = new AgentClients(transport);
    this.runs = new AgentRuns(transport);
    this.schedules = new Schedules(transport);
  }

  /**
   * Creates an agent. It starts `active`.
   *
   * Sent with an `Idempotency-Key`, so it is retried like a read (timeouts, lost connections, 408, 409, 429,
   * 5xx): a retry after a lost answer gets that answer, and no second agent is made. Pass `idempotencyKey` to
   * choose the key, for a create you may repeat yourself.
   *
   * @throws {BadRequestError} invalid fields (`details` names them)
   * @throws {PermissionDeniedError} `FORBIDDEN` without the `agents:write` scope; `INSUFFICIENT_QUOTA` when the
   *   account holds its maximum number of agents
   */
  async create(params: AgentCreateParams, options?: RequestOptions): Promise<Agent> {
    const body = (await this.#transport.json(
      { method: "POST", path: "/agents", body: params },
      options,
    )) as DataEnvelope<Agent>;
    return body.data;
  }

  /**
   * Reads an agent.
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND` when the account has no such agent
   */
  async get(agentId: string, options?: RequestOptions): Promise<Agent> {
    const body = (await this.#transport.json(
      { method: "GET", path: `/agents/${idSegment("agentId", agentId)}` },
      options,
    )) as DataEnvelope<Agent>;
    return body.data;
  }

  /**
   * Lists the account's agents, a page at a time (default 20, newest first). Await the result for one page, or
   * iterate it for every agent of every page:
   *
   * ```ts
   * for await (const agent of client.agents.list({ limit: 50 })) console.log(agent.name);
   * const page = await client.agents.list({ status: "active" });
   * if (page.hasNextPage()) await page.nextPage();
   * ```
   *
   * @throws {BadRequestError} a query value out of range (`limit` above 100, ...)
   */
  list(params: AgentListParams = {}, options?: RequestOptions): PagePromise<Agent> {
    const fetchPage = async (page: number | undefined): Promise<Page<Agent>> => {
      const body = (await this.#transport.json(
        {
          method: "GET",
          path: "/agents",
          query: { ...params, page },
        },
        options,
      )) as ListEnvelope<Agent>;
      return new Page(body.data, body.pagination, fetchPage);
    };
    return new PagePromise(() => fetchPage(params.page));
  }

  /**
   * Updates the fields given and no others. `status: "inactive"` pauses the agent (messages to it are refused
   * with `ConflictError`), `status: "active"` resumes it; either keeps its data.
   *
   * With `ifMatch` (the agent's `updatedAt` or ETag as you read it), only if nobody changed the agent since:
   *
   * ```ts
   * const agent = await client.agents.get(id);
   * await client.agents.update(id, { bio: [...agent.bio, "new"] }, { ifMatch: agent.updatedAt });
   * ```
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   * @throws {BadRequestError} invalid fields, or `status: "error"`
   * @throws {ConflictError} 412 `PRECONDITION_FAILED`: the agent changed since `ifMatch`
   */
  async update(
    agentId: string,
    params: AgentUpdateParams,
    options?: ConditionalRequestOptions,
  ): Promise<Agent> {
    const body = (await this.#transport.json(
      {
        method: "PATCH",
        path: `/agents/${idSegment("agentId", agentId)}`,
        body: params,
      },
      conditional(options),
    )) as DataEnvelope<Agent>;
    return body.data;
  }

  /**
   * Deletes an agent with its conversation history, metrics and logs, permanently.
   *
   * Sent with an `Idempotency-Key`: if a first attempt deleted the agent but its answer was lost, the retry gets
   * that answer. With `ifMatch` (the agent's `updatedAt` or ETag), only if the agent has not changed since.
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   * @throws {PermissionDeniedError} without the `agents:delete` scope
   * @throws {ConflictError} 412 `PRECONDITION_FAILED`: the agent changed since `ifMatch`
   */
  async delete(agentId: string, options?: ConditionalRequestOptions): Promise<AgentDeleted> {
    const body = (await this.#transport.json(
      { method: "DELETE", path: `/agents/${idSegment("agentId", agentId)}` },
      conditional(options),
    )) as DataEnvelope<AgentDeleted>;
    return body.data;
  }

  /**
   * Makes an agent of an elizaOS character file (v0.x, 1.x, or the grouped `messageExamples` of later releases),
   * or with `dryRun`, answers the agent it would make without storing anything. Give the file as an object, or
   * in Node as the path of the JSON file, which is read and sent as it is. Fields without a place of their
   * own in an agent are kept in its `personality` under their file names; `warnings` names, by path in the file,
   * what was kept but will not act (file references in `knowledge`, plugins not in the catalogue, secrets, a
   * provider the server has no configuration for).
   *
   * ```ts
   * const preview = await client.agents.importCharacter("eliza.character.json", { dryRun: true });
   * for (const warning of preview.warnings) console.warn(`${warning.field}: ${warning.issue}`);
   * const { agent } = await client.agents.importCharacter("eliza.character.json");
   * const { agent: other } = await client.agents.importCharacter({ name: "Eliza", bio: "A helper." });
   * // A file naming a provider this server has no key for: answer with the server's default model instead.
   * const { agent: local } = await client.agents.importCharacter("eliza.character.json", { useDefaultModel: true });
   * ```
   *
   * Sent with an `Idempotency-Key`, as every create: a retry after a lost answer makes no second agent.
   *
   * @throws {AgentryError} a path that cannot be read, or whose file is not a JSON object (outside Node: any
   *   path, there being no file system to read it from)
   * @throws {BadRequestError} every problem of the file at once, by JSON path in `details`
   * @throws {PermissionDeniedError} `FORBIDDEN` without `agents:write`; `INSUFFICIENT_QUOTA` when the account
   *   holds its maximum number of agents (not checked by a dry run)
   */
  importCharacter(
    file: CharacterFile | string,
    params: CharacterImportParams & { dryRun: true },
    options?: RequestOptions,
  ): Promise<CharacterImportPreview>;
  importCharacter(
    file: CharacterFile | string,
    params?: CharacterImportParams & { dryRun?: false | undefined },
    options?: RequestOptions,
  ): Promise<CharacterImport>;
  importCharacter(
    file: CharacterFile | string,
    params?: CharacterImportParams,
    options?: RequestOptions,
  ): Promise<CharacterImport | CharacterImportPreview>;
  async importCharacter(
    file: CharacterFile | string,
    params: CharacterImportParams = {},
    options?: RequestOptions,
  ): Promise<CharacterImport | CharacterImportPreview> {
    const query = {
      ...(params.dryRun === true ? { dryRun: true } : {}),
      ...(params.useDefaultModel === true ? { useDefaultModel: true } : {}),
    };
    const body = (await this.#transport.json(
      {
        method: "POST",
        path: "/agents/import",
        query: Object.keys(query).length > 0 ? query : undefined,
        body: typeof file === "string" ? await readJsonFile(file) : file,
      },
      options,
    )) as { data: Agent | AgentDraft; warnings: FieldIssue[] };
    return { agent: body.data, warnings: body.warnings } as CharacterImport | CharacterImportPreview;
  }

  /**
   * The agent as an elizaOS 1.x character file, ready to be saved or imported elsewhere. What the format has no
   * field for is kept under `settings.agentry`, so importing the file gives back an equal agent. Secrets never
   * leave: `settings.secrets` and `secrets` are empty.
   *
   * ```ts
   * const file = await client.agents.exportCharacter(agentId);
   * await writeFile(`${file.name}.character.json`, JSON.stringify(file, null, 2));
   * ```
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   */
  async exportCharacter(agentId: string, options?: RequestOptions): Promise<ExportedCharacterFile> {
    // The file itself, without the API's envelope.
    return (await this.#transport.json(
      { method: "GET", path: `/agents/${idSegment("agentId", agentId)}/character` },
      options,
    )) as ExportedCharacterFile;
  }
}

/** A character file read from a path: a JSON object, or an `AgentryError` naming the path and what is wrong. */
async function readJsonFile(path: string): Promise<CharacterFile> {
  const text = await readTextFile(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new AgentryError(`The character file ${path} is not JSON: ${(cause as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new AgentryError(`The character file ${path} does not hold a JSON object.`);
  }
  return parsed as CharacterFile;
}
