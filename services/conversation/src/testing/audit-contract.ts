import { type AuditStamp, newId, withAuditStamp } from "@agentry/core";
import { afterEach, describe, expect, it } from "vitest";
import { newDocument } from "../documents.js";
import { newMemory } from "../memories.js";
import type { ConversationStore, ScheduleRecord } from "../store/types.js";

const STAMP: AuditStamp = {
  actor: { type: "member", id: "usr_01JCZ3S8Q5M2T7V9X0B4D6F8H1" },
  ip: "203.0.113.7",
  requestId: "req_1",
};

function schedule(accountId: string, agentId: string): ScheduleRecord {
  const now = new Date().toISOString();
  return {
    id: newId("schedule"),
    accountId,
    agentId,
    cron: "0 9 * * *",
    timezone: "UTC",
    text: "Report",
    userId: null,
    roomId: null,
    enabled: true,
    nextFireAt: now,
    skippedFires: 0,
    lastFire: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * What every ConversationStore records on its audit log (docs/api/audit.md): the changes a caller makes, each in its
 * own transaction and under the call's stamp; none of the service's own work; pages and pruning.
 */
export function auditStoreContract(name: string, open: () => Promise<ConversationStore>): void {
  describe(`${name} store: audit log`, () => {
    const opened: ConversationStore[] = [];
    async function store(): Promise<ConversationStore> {
      const s = await open();
      opened.push(s);
      return s;
    }
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });
    const all = async (s: ConversationStore, accountId: string) =>
      (await s.listAuditEvents(accountId, { limit: 100, ascending: true })).items;

    it("records schedules, documents, memories, erasures and cancelled runs under the call's stamp", async () => {
      const s = await store();
      const [account, agent] = ["acct_A", "agt_A"];
      const made = await withAuditStamp(STAMP, () => s.schedules.createSchedule(schedule(account, agent)));
      await withAuditStamp(STAMP, () =>
        s.schedules.updateSchedule(account, agent, made.id, {
          enabled: false,
          updatedAt: new Date().toISOString(),
        }),
      );
      await withAuditStamp(STAMP, () => s.schedules.deleteSchedule(account, agent, made.id));
      const document = await withAuditStamp(STAMP, () =>
        s.addDocument(
          account,
          agent,
          newDocument({ title: "Tides", type: "text/plain", sizeBytes: 5, source: "" }, "Tides"),
        ),
      );
      await withAuditStamp(STAMP, () => s.deleteDocument(account, agent, document!.id));
      const owner = { accountId: account, agentId: agent, userId: "u1" };
      const [written] = await withAuditStamp(STAMP, () =>
        s.addMemories(owner, [newMemory("Likes teal.", null)!], 100),
      );
      // Learned from a message: the service's own work, not a caller's change.
      await withAuditStamp(STAMP, () => s.addMemories(owner, [newMemory("Drinks tea.", "msg_1")!], 100));
      await withAuditStamp(STAMP, () => s.deleteMemory(account, agent, written!.memory.id));
      await withAuditStamp(STAMP, () => s.eraseUser(account, "u1"));
      const end = new Date().toISOString();
      await withAuditStamp(STAMP, () =>
        s.cancelAgentRuns(account, agent, {
          status: "failed",
          errorCode: "CANCELLED",
          errorMessage: "cancelled",
          result: null,
          endedAt: end,
          expiresAt: end,
          keptUntil: end,
        }),
      );
      // Changes to nothing record nothing.
      await withAuditStamp(STAMP, () => s.schedules.deleteSchedule(account, agent, made.id));
      await withAuditStamp(STAMP, () => s.deleteConversation(account, agent, newId("conversation")));
      await withAuditStamp(STAMP, () => s.deleteMemory(account, agent, written!.memory.id));
      // Without a stamp: the service's own work.
      await s.schedules.createSchedule(schedule(account, agent));

      const events = await all(s, account);
      expect(events.map((e) => [e.action, e.target.type])).toEqual([
        ["schedule.create", "schedule"],
        ["schedule.update", "schedule"],
        ["schedule.delete", "schedule"],
        ["document.create", "document"],
        ["document.delete", "document"],
        ["memory.create", "memory"],
        ["memory.delete", "memory"],
        ["user.erase", "user"],
        ["run.cancel", "agent"],
      ]);
      expect(events[0]).toMatchObject({ actor: STAMP.actor, ip: STAMP.ip, requestId: STAMP.requestId });
      expect(events[0]!.target.id).toBe(made.id);
      expect(events[1]!.changes).toEqual({ enabled: { from: true, to: false } });
      expect(events[7]!.target.id).toBe("u1");
      expect(events[8]!.target.id).toBe(agent);
      expect(await all(s, "acct_B")).toEqual([]);
    });

    it("pages and prunes", async () => {
      const s = await store();
      for (let i = 0; i < 3; i += 1) {
        await withAuditStamp(STAMP, () => s.schedules.createSchedule(schedule("acct_A", "agt_A")));
      }
      const events = await all(s, "acct_A");
      const page = await s.listAuditEvents("acct_A", { limit: 2, ascending: false });
      expect(page).toEqual({ items: [events[2], events[1]], hasMore: true });
      const rest = await s.listAuditEvents("acct_A", { limit: 2, ascending: false, before: events[1]!.id });
      expect(rest).toEqual({ items: [events[0]], hasMore: false });
      const filtered = await s.listAuditEvents("acct_A", {
        limit: 10,
        ascending: true,
        action: "schedule.create",
        targetId: events[1]!.target.id,
      });
      expect(filtered.items).toEqual([events[1]]);
      expect(await s.pruneAuditEvents(new Date(Date.parse(events[2]!.at) + 1).toISOString(), 2)).toBe(2);
      expect(await all(s, "acct_A")).toHaveLength(1);
    });
  });
}
