import { afterEach, describe, expect, it } from "vitest";
import type { Clock, ConnectorStore } from "../store/types.js";

export type OpenConnectorStore = (
  clock: Clock,
) => Promise<{ store: ConnectorStore; cleanup(): Promise<void> }>;

/** The behaviour every connectors store keeps, run against each implementation on a real database. */
export function connectorStoreContract(name: string, open: OpenConnectorStore): void {
  describe(`connectors store contract (${name})`, () => {
    let cleanup: (() => Promise<void>) | undefined;
    let now = Date.parse("2026-01-01T00:00:00Z");
    const clock = () => now;
    const fresh = async () => {
      const opened = await open(clock);
      cleanup = opened.cleanup;
      return opened.store;
    };
    afterEach(async () => {
      await cleanup?.();
      cleanup = undefined;
    });

    it("hands a lease to one holder until it expires, then to another", async () => {
      const store = await fresh();
      expect(await store.acquireLease("telegram:1", "a", 10_000)).toBe(true);
      expect(await store.acquireLease("telegram:1", "b", 10_000)).toBe(false);
      now += 5_000;
      expect(await store.acquireLease("telegram:1", "a", 10_000)).toBe(true);
      now += 9_000;
      expect(await store.acquireLease("telegram:1", "b", 10_000)).toBe(false);
      now += 1_000;
      expect(await store.acquireLease("telegram:1", "b", 10_000)).toBe(true);
      expect(await store.acquireLease("telegram:1", "a", 10_000)).toBe(false);
      expect(await store.acquireLease("telegram:2", "a", 10_000)).toBe(true);
    });

    it("frees a released lease at once, and only its holder's", async () => {
      const store = await fresh();
      await store.acquireLease("k", "a", 10_000);
      await store.releaseLease("k", "b");
      expect(await store.acquireLease("k", "b", 10_000)).toBe(false);
      await store.releaseLease("k", "a");
      expect(await store.acquireLease("k", "b", 10_000)).toBe(true);
    });

    it("keeps cursors", async () => {
      const store = await fresh();
      expect(await store.cursor("telegram:1")).toBeUndefined();
      await store.setCursor("telegram:1", "10");
      await store.setCursor("telegram:1", "11");
      expect(await store.cursor("telegram:1")).toBe("11");
    });

    it("marks a message answered once", async () => {
      const store = await fresh();
      expect(await store.answered("telegram:1:5:9")).toBe(false);
      expect(await store.markAnswered("telegram:1:5:9", "agent_1")).toBe(true);
      expect(await store.markAnswered("telegram:1:5:9", "agent_1")).toBe(false);
      expect(await store.answered("telegram:1:5:9")).toBe(true);
      expect(await store.ping()).toBe(true);
    });

    it("takes an answer back so the message may be answered again", async () => {
      const store = await fresh();
      expect(await store.markAnswered("slack:U1:C1:1.2", "agent_1")).toBe(true);
      await store.releaseAnswered("slack:U1:C1:1.2");
      expect(await store.answered("slack:U1:C1:1.2")).toBe(false);
      expect(await store.markAnswered("slack:U1:C1:1.2", "agent_1")).toBe(true);
    });
  });
}
