import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newId } from "@agentry/core";
import { type AppError, fromConnectError } from "@agentry/errors";
import { silentLogger } from "@agentry/logging";
import { type Delivery, WebhookService } from "@agentry/proto";
import { createInProcessTransport, servedInterceptors } from "@agentry/rpc";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { type Client, createClient } from "@connectrpc/connect";
import { vi } from "vitest";
import { type BuildWebhooksOptions, buildWebhooks, type Webhooks } from "../src/index.js";

/**
 * Name resolution for the tests, which run without DNS: names of `example.com` resolve to a public address (that
 * nothing here ever connects to), `localhost` to loopback, and `names` to what a test sets.
 */
export function testLookup(names: Map<string, string> = new Map()) {
  return async (hostname: string) => {
    const address =
      names.get(hostname) ??
      (hostname === "localhost"
        ? "127.0.0.1"
        : hostname.endsWith("example.com")
          ? "93.184.215.14"
          : undefined);
    if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return [{ address, family: address.includes(":") ? 6 : 4 }];
  };
}

/** A short schedule, so retries happen within a test: 0.3 s, 0.9 s, 2.7 s (each ±20 %, so they never overlap). */
export const TEST_SCHEDULE_MS = [300, 900, 2700];

export interface Harness {
  webhooks: Webhooks;
  client: Client<typeof WebhookService>;
  dataDir: string;
  close(): Promise<void>;
}

/** The service built as the all-in-one server builds it, called through the in-process transport. */
export async function startWebhooks(options: Partial<BuildWebhooksOptions> = {}): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), "agentry-webhooks-"));
  const logger = silentLogger();
  const webhooks = await buildWebhooks({
    dataDir,
    logger,
    allowPrivateNetworks: true,
    retryScheduleMs: TEST_SCHEDULE_MS,
    pollIntervalMs: 50,
    leaseMs: 15_000,
    lookup: testLookup(),
    ...options,
  });
  const client = createClient(
    WebhookService,
    createInProcessTransport(webhooks.routes, { serverInterceptors: servedInterceptors(logger) }),
  );
  return {
    webhooks,
    client,
    dataDir,
    async close() {
      await webhooks.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The AppError a call failed with. */
export async function refusal(call: Promise<unknown>): Promise<AppError> {
  try {
    await call;
  } catch (error) {
    return fromConnectError(error);
  }
  throw new Error("the call succeeded");
}

/** Publishes events as another service's outbox relay does; returns their ids. */
export async function publish(
  client: Client<typeof WebhookService>,
  accountId: string,
  ...types: string[]
): Promise<string[]> {
  const events = types.map((type) => ({
    id: newId("event"),
    type,
    accountId,
    createTime: timestampNow(),
    data: { id: newId("agent"), type },
  }));
  await client.publishEvents({ events });
  return events.map((e) => e.id);
}

/** The endpoint's whole delivery log, newest first. */
export async function deliveryLog(
  client: Client<typeof WebhookService>,
  accountId: string,
  webhookId: string,
): Promise<Delivery[]> {
  return (await client.listDeliveries({ accountId, webhookId, limit: 100 })).deliveries;
}

/** Waits (up to `timeout` ms) until `check` passes. */
export function eventually<T>(check: () => T | Promise<T>, timeout = 20_000): Promise<T> {
  return vi.waitFor(check, { timeout, interval: 50 });
}
