import type { RequestOptions, Transport } from "../core.js";
import type { Secret, SecretDeleted } from "../types.js";
import { idSegment } from "./path.js";

const secretsPath = (agentId: string) => `/agents/${idSegment("agentId", agentId)}/secrets`;

/**
 * An agent's secrets: credentials its plugins read (the `mcp` plugin's `authSecret`, for example). Values are
 * stored encrypted and never come back; the API answers names and times only. Every call needs the
 * `plugins:manage` scope.
 */
export class AgentSecrets {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Sets the secret `name` of the agent to `value`, replacing it if it exists.
   *
   * ```ts
   * await client.agents.secrets.set(agentId, "MCP_TOKEN", { value: process.env.MCP_TOKEN! });
   * ```
   *
   * Sent with an `Idempotency-Key`, so a retry after a lost answer gets that answer.
   *
   * @throws {BadRequestError} a name outside `[A-Za-z0-9_-]{1,64}`, or a value not of 1 to 4096 characters
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   */
  async set(
    agentId: string,
    name: string,
    params: { value: string },
    options?: RequestOptions,
  ): Promise<Secret> {
    const body = (await this.#transport.json(
      { method: "PUT", path: `${secretsPath(agentId)}/${idSegment("name", name)}`, body: params },
      options,
    )) as { data: Secret };
    return body.data;
  }

  /**
   * The agent's secrets, sorted by name: each one's name and when it was set, never its value.
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   */
  async list(agentId: string, options?: RequestOptions): Promise<Secret[]> {
    const body = (await this.#transport.json({ method: "GET", path: secretsPath(agentId) }, options)) as {
      data: Secret[];
    };
    return body.data;
  }

  /**
   * Deletes the secret `name` of the agent; a plugin that reads it then runs without it.
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`, `SECRET_NOT_FOUND`
   */
  async delete(agentId: string, name: string, options?: RequestOptions): Promise<SecretDeleted> {
    const body = (await this.#transport.json(
      { method: "DELETE", path: `${secretsPath(agentId)}/${idSegment("name", name)}` },
      options,
    )) as { data: SecretDeleted };
    return body.data;
  }
}
