import { newId } from "@agentry/core";
import { expect } from "vitest";
import type { WebhookStore } from "../src/store/types.js";

/**
 * Eight endpoints with due work, claimed by eight workers at once through two stores on one database: every
 * endpoint is handed out, none twice.
 */
export async function expectExclusiveClaims(a: WebhookStore, b: WebhookStore): Promise<void> {
  const accountId = newId("account");
  for (let i = 0; i < 8; i++) {
    await a.createEndpoint({
      id: newId("webhook"),
      accountId,
      fields: { url: `https://hooks.example.com/${i}`, events: ["*"], description: "", enabled: true },
      secret: "whsec_a",
    });
  }
  const events = Array.from({ length: 3 }, () => ({
    id: newId("event"),
    type: "agent.created",
    accountId,
    createdAt: new Date().toISOString(),
    data: "{}",
  }));
  await b.publishEvents(events);
  const claims = (
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? a : b).claim({ worker: `worker-${i}`, limit: 3, leaseMs: 30_000 }),
      ),
    )
  ).flat();
  const endpoints = claims.map((c) => c.endpoint.id);
  expect(endpoints).toHaveLength(8);
  expect(new Set(endpoints).size).toBe(8);
  expect(await a.claim({ worker: "late", limit: 8, leaseMs: 30_000 })).toEqual([]);
}
