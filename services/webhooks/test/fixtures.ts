import { newId } from "@agentry/core";
import { expect } from "vitest";
import type { WebhookStore } from "../src/store/types.js";

/**
 * Eight endpoints with due work, claimed by eight workers at once through two stores on one database, each
 * endpoint's three attempts at a time: every endpoint is handed out with all three, none twice.
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
  const perWorker = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      (i % 2 === 0 ? a : b).claim({ worker: `worker-${i}`, limit: 3, leaseMs: 30_000, perEndpoint: 3 }),
    ),
  );
  const claims = perWorker.flat();
  expect(claims).toHaveLength(24);
  expect(new Set(claims.map((c) => c.delivery.id)).size).toBe(24);
  // Each endpoint went to one worker only, with its three attempts.
  const holders = new Map<string, Set<number>>();
  perWorker.forEach((mine, worker) => {
    for (const c of mine) holders.set(c.endpoint.id, (holders.get(c.endpoint.id) ?? new Set()).add(worker));
  });
  expect(holders.size).toBe(8);
  for (const workers of holders.values()) expect(workers.size).toBe(1);
  expect(await a.claim({ worker: "late", limit: 8, leaseMs: 30_000 })).toEqual([]);
}
