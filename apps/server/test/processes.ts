import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateApiKey, SCOPES } from "@agentry/core";
import { openRegistryStore } from "@agentry/registry";
import type { DeployableProcess } from "@agentry/testing";

/**
 * A new data directory holding one account with a key of every scope and limits no test reaches, for all-in-one
 * servers started as processes on it.
 */
export async function seedDataDir(name: string): Promise<{ dataDir: string; key: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), `agentry-${name}-`));
  const store = await openRegistryStore({ dataDir });
  try {
    const account = await store.createAccount({
      name,
      tier: "enterprise",
      limitOverrides: { requestsPerMinute: 1_000_000, createPerMinute: 1_000_000, getPerMinute: 1_000_000 },
    });
    const generated = generateApiKey();
    await store.createApiKey({
      accountId: account.id,
      name: "test",
      scopes: [...SCOPES],
      expiresAt: null,
      sha256: generated.sha256,
      prefix: generated.prefix,
    });
    return { dataDir, key: generated.secret };
  } finally {
    await store.close();
  }
}

/** A JSON call to a server process under the key `key()` answers (read at each call). */
export function jsonCaller(key: () => string) {
  return async <T>(on: DeployableProcess, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${on.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key()}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
}

/** A local endpoint that counts the requests made to it (an agent's http tool), answering `answer` to each. */
export async function startCounter(answer: string) {
  let counted = 0;
  const server = createServer((_, res) => {
    counted += 1;
    res.writeHead(200, { "content-type": "application/json" }).end(answer);
  }).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    get count() {
      return counted;
    },
    reset() {
      counted = 0;
    },
    close() {
      server.close();
    },
  };
}
