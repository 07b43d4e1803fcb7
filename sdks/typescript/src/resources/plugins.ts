import type { RequestOptions, Transport } from "../core.js";
import type { Plugin } from "../types.js";

/** The plugin catalogue: the plugins this deployment installs, which an agent enables by naming them. */
export class Plugins {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Lists the catalogue, sorted by name: each plugin's version, the JSON Schema of its `config`, the secrets it
   * reads and its tools. Any valid key may call it.
   *
   * ```ts
   * for (const plugin of await client.plugins.list()) {
   *   console.log(plugin.name, plugin.tools.map((tool) => tool.name));
   * }
   * ```
   */
  async list(options?: RequestOptions): Promise<Plugin[]> {
    const body = (await this.#transport.json({ method: "GET", path: "/plugins" }, options)) as {
      data: Plugin[];
    };
    return body.data;
  }
}
