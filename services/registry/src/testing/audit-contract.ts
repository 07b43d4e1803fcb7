import { type AuditStamp, CLI_STAMP, newId, withAuditStamp } from "@agentry/core";
import type { AppError } from "@agentry/errors";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RegistryStore } from "../store/types.js";
import { agentFields } from "./agent-fields.js";

const KEY: AuditStamp = {
  actor: { type: "key", id: "key_01JCZ3S8Q5M2T7V9X0B4D6F8H1" },
  ip: "203.0.113.7",
  requestId: "req_1",
};
const MEMBER: AuditStamp = {
  actor: { type: "member", id: "usr_01JCZ3S8Q5M2T7V9X0B4D6F8H1" },
  ip: "::1",
  requestId: "req_2",
};

/**
 * The registry's audit log (docs/api/audit.md): every change made under a stamp records one event in the change's
 * transaction; a refused change records none; nothing is recorded without a stamp; pages, filters and pruning.
 */
export function auditStoreContract(
  name: string,
  open: () => Promise<{ store: RegistryStore; cleanup(): Promise<void> }>,
): void {
  describe(`RegistryStore audit log: ${name}`, () => {
    let store: RegistryStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await open());
    });
    afterEach(async () => {
      await cleanup();
    });

    const all = (accountId: string) =>
      store.listAuditEvents(accountId, { limit: 100, ascending: true }).then((page) => page.items);

    it("records each change with its stamp, and its changed fields", async () => {
      const account = await withAuditStamp(CLI_STAMP, () =>
        store.createAccount({ name: `acme-${newId("request")}`, tier: "pro", limitOverrides: {} }),
      );
      const agent = await withAuditStamp(KEY, () =>
        store.createAgent(account.id, agentFields({ name: "Ada" })),
      );
      await withAuditStamp(MEMBER, () =>
        store.updateAgent(account.id, agent.id, { name: "Grace", goals: ["x"] }),
      );
      await withAuditStamp(KEY, () =>
        store.putAgentSecret(account.id, agent.id, "TOKEN", "sealed-secret-text"),
      );
      await withAuditStamp(KEY, () =>
        store.putAgentSecret(account.id, agent.id, "TOKEN", "sealed-other-text"),
      );
      await withAuditStamp(KEY, () => store.deleteAgentSecret(account.id, agent.id, "TOKEN"));
      const key = await withAuditStamp(MEMBER, () =>
        store.createApiKey({
          accountId: account.id,
          name: "ci",
          scopes: ["agents:read"],
          expiresAt: null,
          sha256: "a".repeat(64),
          prefix: "agentry_sk_abcd",
        }),
      );
      await withAuditStamp(MEMBER, () => store.revokeApiKey(key.id, account.id));
      await withAuditStamp(MEMBER, () => store.revokeApiKey(key.id, account.id)); // changes nothing
      const member = await withAuditStamp(MEMBER, () =>
        store.createMember({ accountId: account.id, email: "ada@example.com", name: "Ada", role: "viewer" }),
      );
      await withAuditStamp(MEMBER, () => store.updateMember(account.id, member.id, { role: "admin" }));
      await withAuditStamp(MEMBER, () => store.deleteMember(account.id, member.id));
      const budget = await withAuditStamp(KEY, () =>
        store.createBudget({
          accountId: account.id,
          agentId: null,
          apiKeyId: null,
          unit: "tokens",
          period: "day",
          limit: 10,
        }),
      );
      await withAuditStamp(KEY, () => store.updateBudget(account.id, budget.id, { limit: 20 }));
      await withAuditStamp(KEY, () => store.deleteBudget(account.id, budget.id));
      await withAuditStamp(CLI_STAMP, () => store.updateAccount(account.id, { tier: "enterprise" }));
      await withAuditStamp(KEY, () => store.deleteAgent(account.id, agent.id));

      const events = await all(account.id);
      expect(events.map((e) => [e.action, e.actor.type, e.target.type])).toEqual([
        ["account.create", "cli", "account"],
        ["agent.create", "key", "agent"],
        ["agent.update", "member", "agent"],
        ["secret.set", "key", "secret"],
        ["secret.set", "key", "secret"],
        ["secret.delete", "key", "secret"],
        ["key.create", "member", "key"],
        ["key.revoke", "member", "key"],
        ["member.invite", "member", "member"],
        ["member.update", "member", "member"],
        ["member.remove", "member", "member"],
        ["budget.create", "key", "budget"],
        ["budget.update", "key", "budget"],
        ["budget.delete", "key", "budget"],
        ["account.update", "cli", "account"],
        ["agent.delete", "key", "agent"],
      ]);
      const [, created, updated, set, reset] = events;
      expect(created).toMatchObject({
        actor: KEY.actor,
        ip: KEY.ip,
        requestId: KEY.requestId,
        target: { id: agent.id },
      });
      expect(updated!.changes).toEqual({
        name: { from: "Ada", to: "Grace" },
        goals: { from: [], to: ["x"] },
      });
      expect(set!.target.id).toBe(`${agent.id}/TOKEN`);
      expect(set!.changes).toEqual({ value: { from: null, to: "[redacted]" } });
      expect(reset!.changes).toEqual({ value: { from: "[redacted]", to: "[redacted]" } });
      expect(events[9]!.changes).toEqual({ role: { from: "viewer", to: "admin" } });
      expect(events[12]!.changes).toEqual({ limit: { from: 10, to: 20 } });
      expect(events[14]!.changes).toEqual({ tier: { from: "pro", to: "enterprise" } });
      expect(events[0]!.actor).toEqual({ type: "cli", id: null });
      const text = JSON.stringify(events);
      expect(text).not.toContain("sealed-secret-text");
      expect(text).not.toContain("sealed-other-text");
      expect(text).not.toContain("a".repeat(64));
      // Ids sort by time.
      expect(events.map((e) => e.id)).toEqual(events.map((e) => e.id).sort());
      expect(events.every((e) => /^aud_[0-9A-HJKMNP-TV-Z]{26}$/.test(e.id))).toBe(true);
    });

    it("records nothing for a refused change, nor for a change no one made", async () => {
      const account = await store.createAccount({
        name: `solo-${newId("request")}`,
        tier: "pro",
        limitOverrides: {},
      });
      const [owner] = (await store.listMembers(account.id, { limit: 10, order: "asc" })).items;
      const refused = await withAuditStamp(MEMBER, () =>
        store.deleteMember(account.id, owner!.id).then(
          () => null,
          (error: unknown) => error,
        ),
      );
      expect((refused as AppError).code).toBe("LAST_OWNER");
      await withAuditStamp(MEMBER, () =>
        store.createMember({ accountId: account.id, email: "a@example.com", name: "A", role: "viewer" }),
      );
      const duplicate = await withAuditStamp(MEMBER, () =>
        store
          .createMember({ accountId: account.id, email: "A@example.com", name: "B", role: "viewer" })
          .catch((error: unknown) => error),
      );
      expect((duplicate as AppError).code).toBe("MEMBER_EXISTS");
      // Without a stamp (the service's own work): not recorded.
      await store.createAgent(account.id, agentFields());
      expect((await all(account.id)).map((e) => e.action)).toEqual(["member.invite"]);
    });

    it("pages by cursor in both orders and filters", async () => {
      const account = await store.createAccount({
        name: `paged-${newId("request")}`,
        tier: "pro",
        limitOverrides: {},
      });
      const agents = [];
      for (let i = 0; i < 5; i += 1) {
        agents.push(
          await withAuditStamp(i % 2 ? MEMBER : KEY, () => store.createAgent(account.id, agentFields())),
        );
      }
      const ids = (await all(account.id)).map((e) => e.id);
      expect(ids).toHaveLength(5);
      const newest = await store.listAuditEvents(account.id, { limit: 2, ascending: false });
      expect(newest).toEqual({ items: expect.any(Array), hasMore: true });
      expect(newest.items.map((e) => e.id)).toEqual([ids[4], ids[3]]);
      const below = await store.listAuditEvents(account.id, { limit: 2, ascending: false, before: ids[3] });
      expect(below.items.map((e) => e.id)).toEqual([ids[2], ids[1]]);
      const above = await store.listAuditEvents(account.id, { limit: 2, ascending: false, after: ids[0] });
      expect(above.items.map((e) => e.id)).toEqual([ids[2], ids[1]]);
      const up = await store.listAuditEvents(account.id, { limit: 10, ascending: true, after: ids[2] });
      expect(up).toEqual({
        items: [expect.objectContaining({ id: ids[3] }), expect.objectContaining({ id: ids[4] })],
        hasMore: false,
      });
      const byMember = await store.listAuditEvents(account.id, {
        limit: 10,
        ascending: true,
        actorType: "member",
      });
      expect(byMember.items.map((e) => e.target.id)).toEqual([agents[1]!.id, agents[3]!.id]);
      const byTarget = await store.listAuditEvents(account.id, {
        limit: 10,
        ascending: true,
        targetId: agents[2]!.id,
      });
      expect(byTarget.items.map((e) => e.id)).toEqual([ids[2]]);
      const byAction = await store.listAuditEvents(account.id, {
        limit: 10,
        ascending: true,
        action: "agent.delete",
      });
      expect(byAction.items).toEqual([]);
      const events = await all(account.id);
      const window = await store.listAuditEvents(account.id, {
        limit: 10,
        ascending: true,
        since: events[0]!.at,
        until: new Date(Date.parse(events[4]!.at) + 1).toISOString(),
      });
      expect(window.items).toHaveLength(5);
      const none = await store.listAuditEvents(account.id, {
        limit: 10,
        ascending: true,
        until: events[0]!.at,
      });
      expect(none.items).toEqual([]);
      // Another account's log is its own.
      expect(await all(newId("account"))).toEqual([]);
    });

    it("prunes the events recorded before a time, in batches", async () => {
      const account = await store.createAccount({
        name: `pruned-${newId("request")}`,
        tier: "pro",
        limitOverrides: {},
      });
      for (let i = 0; i < 3; i += 1)
        await withAuditStamp(KEY, () => store.createAgent(account.id, agentFields()));
      const events = await all(account.id);
      expect(await store.pruneAuditEvents(events[0]!.at, 10)).toBe(0);
      const after = new Date(Date.parse(events[2]!.at) + 1).toISOString();
      expect(await store.pruneAuditEvents(after, 2)).toBe(2);
      expect(await store.pruneAuditEvents(after, 2)).toBe(1);
      expect(await all(account.id)).toEqual([]);
    });
  });
}
