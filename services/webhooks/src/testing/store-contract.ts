import { type AuditStamp, newId, WEBHOOK_BOUNDS, withAuditStamp } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EndpointFields } from "../domain/endpoint.js";
import type { AttemptOutcome } from "../domain/schedule.js";
import { ENDPOINT_DISABLED_ERROR, FAILING_DISABLES_AFTER_MS, INTERRUPTED_ERROR } from "../domain/schedule.js";
import type { Claim, Clock, EventRecord, WebhookStore } from "../store/types.js";

/** A clock tests move by hand. */
export interface ManualClock {
  now: Clock;
  advance(ms: number): void;
}

export function manualClock(start = Date.now()): ManualClock {
  let at = start;
  return {
    now: () => at,
    advance(ms) {
      at += ms;
    },
  };
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SCHEDULE = [1_000, 2_000, 4_000];
const LEASE_MS = 30_000;

const ok = (status = 200): AttemptOutcome => ({
  kind: "answered",
  status,
  durationMs: 12,
  body: new TextEncoder().encode("ok"),
});
const fail = (status = 500): AttemptOutcome => ({
  kind: "answered",
  status,
  durationMs: 7,
  body: new Uint8Array(),
});

/**
 * The behaviour every WebhookStore must have. Each implementation runs it unchanged with its own `open`, which
 * must return an empty store on the clock given; `cleanup` runs after each test.
 */
export function webhookStoreContract(
  name: string,
  open: (clock: Clock) => Promise<{ store: WebhookStore; cleanup(): Promise<void> }>,
): void {
  describe(`WebhookStore contract: ${name}`, () => {
    let store: WebhookStore;
    let cleanup: () => Promise<void>;
    let clock: ManualClock;

    beforeEach(async () => {
      clock = manualClock();
      ({ store, cleanup } = await open(clock.now));
    });

    afterEach(async () => {
      await cleanup();
    });

    const fields = (overrides: Partial<EndpointFields> = {}): EndpointFields => ({
      url: "https://hooks.example.com/in",
      events: ["*"],
      description: "",
      enabled: true,
      ...overrides,
    });
    const createEndpoint = (accountId: string, overrides: Partial<EndpointFields> = {}, secret = "whsec_a") =>
      store.createEndpoint({ id: newId("webhook"), accountId, fields: fields(overrides), secret });
    const event = (
      accountId: string,
      type = "agent.created",
      data: unknown = { id: "agt_1" },
    ): EventRecord => ({
      id: newId("event"),
      type,
      accountId,
      createdAt: new Date(clock.now()).toISOString(),
      data: JSON.stringify(data),
    });
    const claim = (worker = "w1", limit = 10, perEndpoint?: number) =>
      store.claim({ worker, limit, leaseMs: LEASE_MS, ...(perEndpoint ? { perEndpoint } : {}) });
    /** Records a batch of outcomes (and attempts handed back) as a worker does. */
    const record = (
      outcomes: [Claim, AttemptOutcome][],
      options: { worker?: string; claimNext?: boolean; perEndpoint?: number; unsent?: Claim[] } = {},
    ) =>
      store.record({
        worker: options.worker ?? "w1",
        outcomes: outcomes.map(([c, outcome]) => ({ deliveryId: c.delivery.id, outcome })),
        ...(options.unsent ? { unsent: options.unsent.map((c) => c.delivery.id) } : {}),
        schedule: SCHEDULE,
        leaseMs: LEASE_MS,
        claimNext: options.claimNext ?? true,
        ...(options.perEndpoint ? { perEndpoint: options.perEndpoint } : {}),
        random: () => 0.5,
      });
    /** One outcome recorded alone: whether it was, and the endpoint's next attempt. */
    const complete = async (c: Claim, outcome: AttemptOutcome, worker = "w1", claimNext = true) => {
      const result = await record([[c, outcome]], { worker, claimNext });
      expect(result.recorded).toHaveLength(1);
      expect(result.next.length).toBeLessThanOrEqual(1);
      return { recorded: result.recorded[0], next: result.next[0] ?? null };
    };
    const log = async (accountId: string, endpointId: string) =>
      (await store.listDeliveries(accountId, endpointId, { limit: 100, order: "desc" }))?.items ?? [];

    describe("audit log", () => {
      const stamp: AuditStamp = {
        actor: { type: "key", id: "key_01JCZ3S8Q5M2T7V9X0B4D6F8H1" },
        ip: "203.0.113.7",
        requestId: "req_1",
      };
      const all = async (accountId: string) =>
        (await store.listAuditEvents(accountId, { limit: 100, ascending: true })).items;

      it("records each change to an endpoint in its transaction, never its secret", async () => {
        const account = newId("account");
        const endpoint = await withAuditStamp(stamp, () => createEndpoint(account, {}, "whsec_first"));
        await withAuditStamp(stamp, () =>
          store.updateEndpoint(account, endpoint.id, { description: "prod" }),
        );
        await withAuditStamp(stamp, () => store.rotateSecret(account, endpoint.id, "whsec_second", 1000));
        await withAuditStamp(stamp, () => store.deleteEndpoint(account, endpoint.id));
        // Unknown endpoints change nothing and record nothing.
        await withAuditStamp(stamp, () => store.deleteEndpoint(account, endpoint.id));
        await withAuditStamp(stamp, () => store.updateEndpoint(account, endpoint.id, { enabled: false }));
        const events = await all(account);
        expect(events.map((e) => e.action)).toEqual([
          "webhook.create",
          "webhook.update",
          "webhook.rotate_secret",
          "webhook.delete",
        ]);
        expect(events[0]).toMatchObject({ actor: stamp.actor, ip: stamp.ip, requestId: stamp.requestId });
        expect(events[0]!.target).toEqual({ type: "webhook", id: endpoint.id });
        expect(events[1]!.changes).toEqual({ description: { from: "", to: "prod" } });
        expect(events[2]!.changes).toEqual({ secret: { from: "[redacted]", to: "[redacted]" } });
        expect(JSON.stringify(events)).not.toContain("whsec_");
      });

      it("records nothing for a refused create, nor without a stamp, and prunes by time", async () => {
        const account = newId("account");
        for (let i = 0; i < WEBHOOK_BOUNDS.maxPerAccount; i += 1) await createEndpoint(account);
        const refused = await withAuditStamp(stamp, () =>
          createEndpoint(account).catch((error: unknown) => error),
        );
        expect((refused as { code?: string }).code).toBe("INSUFFICIENT_QUOTA");
        expect(await all(account)).toEqual([]);
        const other = newId("account");
        for (let i = 0; i < 3; i += 1) await withAuditStamp(stamp, () => createEndpoint(other));
        const events = await all(other);
        expect(events).toHaveLength(3);
        const page = await store.listAuditEvents(other, {
          limit: 2,
          ascending: false,
          before: events[2]!.id,
        });
        expect(page).toEqual({ items: [events[1], events[0]], hasMore: false });
        expect(await store.pruneAuditEvents(new Date(Date.parse(events[2]!.at) + 1).toISOString(), 10)).toBe(
          3,
        );
        expect(await all(other)).toEqual([]);
      });
    });

    describe("endpoints", () => {
      it("creates an endpoint and reads it back, never with its secret", async () => {
        const account = newId("account");
        const created = await createEndpoint(account, {
          events: ["agent.created", "message.failed"],
          description: "prod",
        });
        expect(created).toEqual({
          id: expect.stringMatching(/^whk_/),
          accountId: account,
          url: "https://hooks.example.com/in",
          events: ["agent.created", "message.failed"],
          description: "prod",
          enabled: true,
          disabledReason: null,
          createdAt: expect.stringMatching(ISO_MS),
          updatedAt: created.createdAt,
        });
        expect(await store.getEndpoint(account, created.id)).toEqual(created);
        expect(JSON.stringify(created)).not.toContain("whsec_");
      });

      it("finds an endpoint by the Idempotency-Key it was made under, in its account and after a time", async () => {
        const [a, b] = [newId("account"), newId("account")];
        const hash = "e".repeat(64);
        const made = await store.createEndpoint({
          id: newId("webhook"),
          accountId: a,
          fields: fields(),
          secret: "whsec_kept",
          idempotencyKeyHash: hash,
        });
        await createEndpoint(a);
        const before = new Date(Date.parse(made.createdAt) - 1).toISOString();
        expect(await store.endpointMadeUnderKey(a, hash, before)).toEqual({
          endpoint: made,
          secret: "whsec_kept",
        });
        expect(await store.endpointMadeUnderKey(a, "f".repeat(64), before)).toBeNull();
        expect(await store.endpointMadeUnderKey(b, hash, before)).toBeNull();
        expect(await store.endpointMadeUnderKey(a, hash, made.createdAt)).toBeNull();
        await store.deleteEndpoint(a, made.id);
        expect(await store.endpointMadeUnderKey(a, hash, before)).toBeNull();
      });

      it("scopes every endpoint to its account", async () => {
        const [a, b] = [newId("account"), newId("account")];
        const endpoint = await createEndpoint(a);
        expect(await store.getEndpoint(b, endpoint.id)).toBeNull();
        expect(await store.listEndpoints(b)).toEqual([]);
        expect(await store.updateEndpoint(b, endpoint.id, { description: "x" })).toBeNull();
        expect(await store.rotateSecret(b, endpoint.id, "whsec_b", 1000)).toBeNull();
        expect(await store.deleteEndpoint(b, endpoint.id)).toBe(false);
        expect(await store.listDeliveries(b, endpoint.id, { limit: 10, order: "desc" })).toBeNull();
        await expect(store.sendTestEvent(b, endpoint.id, event(b, "webhook.test"))).rejects.toMatchObject({
          code: "WEBHOOK_NOT_FOUND",
        });
        expect(await store.getEndpoint(a, endpoint.id)).toEqual(endpoint);
      });

      it("lists an account's endpoints newest first", async () => {
        const account = newId("account");
        const first = await createEndpoint(account);
        const second = await createEndpoint(account);
        expect((await store.listEndpoints(account)).map((e) => e.id)).toEqual([second.id, first.id]);
      });

      it("updates the fields given and keeps the others", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account, { description: "old" });
        clock.advance(1000);
        const updated = await store.updateEndpoint(account, endpoint.id, {
          url: "https://other.example.com/",
          events: ["agent.deleted"],
        });
        expect(updated).toEqual({
          ...endpoint,
          url: "https://other.example.com/",
          events: ["agent.deleted"],
          updatedAt: new Date(clock.now()).toISOString(),
        });
      });

      it("deletes an endpoint with its delivery log", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        await store.publishEvents([event(account)]);
        expect(await store.deleteEndpoint(account, endpoint.id)).toBe(true);
        expect(await store.getEndpoint(account, endpoint.id)).toBeNull();
        expect(await store.deleteEndpoint(account, endpoint.id)).toBe(false);
        expect(await claim()).toEqual([]);
      });

      it("refuses the 21st endpoint of an account with INSUFFICIENT_QUOTA, even created all at once", async () => {
        const account = newId("account");
        const results = await Promise.allSettled(Array.from({ length: 25 }, () => createEndpoint(account)));
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(20);
        for (const r of results) {
          if (r.status === "rejected") {
            expect(r.reason).toBeInstanceOf(AppError);
            expect((r.reason as AppError).code).toBe("INSUFFICIENT_QUOTA");
          }
        }
        expect(await store.listEndpoints(account)).toHaveLength(20);
        // Another account has its own 20.
        await expect(createEndpoint(newId("account"))).resolves.toBeDefined();
        const [one] = await store.listEndpoints(account);
        await store.deleteEndpoint(account, one!.id);
        await expect(createEndpoint(account)).resolves.toBeDefined();
      });
    });

    describe("publishing", () => {
      it("schedules one attempt per enabled endpoint subscribed to the type, and none twice for an event id", async () => {
        const account = newId("account");
        const all = await createEndpoint(account, { events: ["*"] });
        const created = await createEndpoint(account, { events: ["agent.created"] });
        const other = await createEndpoint(account, { events: ["message.completed"] });
        const disabled = await createEndpoint(account, { enabled: false });
        const elsewhere = await createEndpoint(newId("account"));
        const e = event(account, "agent.created");
        expect(await store.publishEvents([e])).toEqual({ accepted: 1, deliveries: 2 });
        expect(await store.publishEvents([e])).toEqual({ accepted: 0, deliveries: 0 });
        for (const endpoint of [all, created]) {
          const entries = await log(account, endpoint.id);
          expect(entries).toEqual([
            {
              id: expect.stringMatching(/^dlv_/),
              endpointId: endpoint.id,
              eventId: e.id,
              eventType: "agent.created",
              attempt: 1,
              status: "pending",
              responseStatus: null,
              durationMs: null,
              error: null,
              createdAt: expect.stringMatching(ISO_MS),
              nextAttemptAt: expect.stringMatching(ISO_MS),
            },
          ]);
        }
        for (const endpoint of [other, disabled]) expect(await log(account, endpoint.id)).toEqual([]);
        expect(await log(elsewhere.accountId, elsewhere.id)).toEqual([]);
      });

      it("accepts a batch mixing new and known events, of several accounts", async () => {
        const [a, b] = [newId("account"), newId("account")];
        await createEndpoint(a);
        await createEndpoint(b, { events: ["message.failed"] });
        const known = event(a);
        await store.publishEvents([known]);
        const result = await store.publishEvents([known, event(a), event(b, "message.failed"), event(b)]);
        // The last is taken by no endpoint of its account, so it is not kept.
        expect(result).toEqual({ accepted: 2, deliveries: 2 });
      });

      it("keeps no event that no enabled endpoint takes, and keeps one published again once one does", async () => {
        const account = newId("account");
        const untaken = event(account, "message.completed", { text: "a user's words" });
        expect(await store.publishEvents([untaken])).toEqual({ accepted: 0, deliveries: 0 });
        await createEndpoint(account, { events: ["message.completed"] });
        expect(await store.publishEvents([untaken])).toEqual({ accepted: 1, deliveries: 1 });
        expect(await store.publishEvents([untaken])).toEqual({ accepted: 0, deliveries: 0 });
      });
    });

    describe("retention", () => {
      it("removes events past their retention with their log, but never one with an attempt pending", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        await store.publishEvents([event(account)]);
        const [first] = await claim();
        await complete(first!, ok(), "w1", false);
        await store.publishEvents([event(account)]);
        const [second] = await claim();
        // The second's retry stays pending, due later.
        await complete(second!, fail(), "w1", false);
        clock.advance(1_000);
        const cutoff = new Date(clock.now());
        await store.publishEvents([event(account)]);
        expect(await store.deleteExpiredEvents(cutoff, 100)).toBe(1);
        const left = await log(account, endpoint.id);
        expect(left.map((entry) => entry.eventId)).not.toContain(first!.event.id);
        expect(left.map((entry) => entry.eventId)).toContain(second!.event.id);
        expect(await store.deleteExpiredEvents(cutoff, 100)).toBe(0);
      });

      it("erases a user's message.completed events with their log, delivered or pending, and nothing else", async () => {
        const [account, other] = [newId("account"), newId("account")];
        const endpoint = await createEndpoint(account);
        await createEndpoint(other);
        const reply = (userId: string | null) => ({ id: newId("message"), userId, text: "a user's words" });
        const delivered = event(account, "message.completed", reply("u1"));
        await store.publishEvents([delivered]);
        const [taken] = await claim();
        await complete(taken!, ok(), "w1", false);
        const pending = event(account, "message.completed", reply("u1"));
        const kept = [
          event(account, "message.completed", reply("u2")),
          event(account, "message.completed", reply(null)),
          event(account, "message.failed", { agentId: "agt_1", messageId: "msg_1", code: "MODEL_ERROR" }),
          event(other, "message.completed", reply("u1")),
        ];
        await store.publishEvents([pending, ...kept]);

        expect(await store.eraseUserEvents(account, "u1")).toBe(2);
        const left = (await log(account, endpoint.id)).map((entry) => entry.eventId);
        expect(left.sort()).toEqual(
          kept
            .slice(0, 3)
            .map((e) => e.id)
            .sort(),
        );
        expect(await log(other, (await store.listEndpoints(other))[0]!.id)).toHaveLength(1);
        expect(await store.eraseUserEvents(account, "u1")).toBe(0);
      });

      it("removes at most `limit` events at a time, oldest first", async () => {
        const account = newId("account");
        await createEndpoint(account);
        await store.publishEvents([event(account)]);
        const [oldest] = await claim();
        await complete(oldest!, ok(), "w1", false);
        clock.advance(1000);
        await store.publishEvents([event(account)]);
        const [newer] = await claim();
        await complete(newer!, ok(), "w1", false);
        clock.advance(1000);
        const cutoff = new Date(clock.now());
        expect(await store.deleteExpiredEvents(cutoff, 1)).toBe(1);
        const endpointId = (await store.listEndpoints(account))[0]!.id;
        expect((await log(account, endpointId)).map((entry) => entry.eventId)).toEqual([newer!.event.id]);
        expect(await store.deleteExpiredEvents(cutoff, 1)).toBe(1);
        expect(await log(account, endpointId)).toEqual([]);
      });
    });

    describe("claiming and recording", () => {
      it("hands out the attempt with the event and the signing secrets, and records a success", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        const e = event(account, "agent.updated", { id: "agt_1", name: "ünï" });
        await store.publishEvents([e]);
        const [c, ...rest] = await claim();
        expect(rest).toEqual([]);
        expect(c).toEqual({
          endpoint: { id: endpoint.id, accountId: account, url: endpoint.url, secrets: ["whsec_a"] },
          delivery: { id: expect.stringMatching(/^dlv_/), attempt: 1 },
          event: e,
        });
        const result = await complete(c!, ok());
        expect(result).toEqual({ recorded: true, next: null });
        const [entry] = await log(account, endpoint.id);
        expect(entry).toMatchObject({
          status: "succeeded",
          responseStatus: 200,
          durationMs: 12,
          error: null,
        });
        expect(entry?.nextAttemptAt).toBeNull();
        expect(await claim()).toEqual([]);
      });

      it("never gives one endpoint to two workers, and gives other endpoints to the second", async () => {
        const account = newId("account");
        const one = await createEndpoint(account);
        await store.publishEvents([event(account), event(account)]);
        const first = await claim("w1");
        expect(first.map((c) => c.endpoint.id)).toEqual([one.id]);
        expect(await claim("w2")).toEqual([]);
        const two = await createEndpoint(account);
        await store.publishEvents([event(account, "agent.deleted")]);
        // w1 holds one; its pending attempt of the new event waits for w1.
        expect((await claim("w2")).map((c) => c.endpoint.id)).toEqual([two.id]);
        // Recording claims the endpoint's next due attempt for the same worker.
        const next = await complete(first[0]!, ok());
        expect(next.next?.endpoint.id).toBe(one.id);
        expect(next.next?.delivery.attempt).toBe(1);
      });

      it("retries a failure on the schedule, each attempt a log entry of its own, then gives up", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        const e = event(account);
        await store.publishEvents([e]);
        let [c] = await claim();
        for (const delay of SCHEDULE) {
          const result = await complete(c!, fail(503));
          expect(result).toEqual({ recorded: true, next: null });
          expect(await claim()).toEqual([]);
          clock.advance(delay - 1);
          expect(await claim()).toEqual([]);
          clock.advance(1);
          [c] = await claim();
          expect(c?.event.id).toBe(e.id);
        }
        expect(c?.delivery.attempt).toBe(4);
        await complete(c!, { kind: "unanswered", error: "the connection was refused", durationMs: 3 });
        clock.advance(60_000);
        expect(await claim()).toEqual([]);
        const entries = await log(account, endpoint.id);
        expect(entries.map((d) => [d.attempt, d.status, d.responseStatus, d.error])).toEqual([
          [4, "failed", null, "the connection was refused"],
          [3, "failed", 503, "the endpoint answered HTTP 503"],
          [2, "failed", 503, "the endpoint answered HTTP 503"],
          [1, "failed", 503, "the endpoint answered HTTP 503"],
        ]);
        expect(entries[0]?.nextAttemptAt).toBeNull();
        // A failed attempt names when its retry is due, the retry's own time (jitter 0.5 is the plain delay).
        expect(Date.parse(entries[3]!.nextAttemptAt!) - Date.parse(entries[3]!.createdAt)).toBe(SCHEDULE[0]);
      });

      it("disables the endpoint at a 410, with a reason, failing its other pending attempts", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        await store.publishEvents([event(account), event(account)]);
        const [c] = await claim();
        expect(await complete(c!, fail(410))).toEqual({ recorded: true, next: null });
        const after = await store.getEndpoint(account, endpoint.id);
        expect(after).toMatchObject({ enabled: false, disabledReason: "The endpoint answered 410 Gone." });
        const entries = await log(account, endpoint.id);
        expect(entries.map((d) => [d.status, d.error])).toEqual([
          ["failed", ENDPOINT_DISABLED_ERROR],
          ["failed", "the endpoint answered HTTP 410"],
        ]);
        await store.publishEvents([event(account)]);
        expect(await claim()).toEqual([]);
        // Its owner enabling it again clears the reason.
        const enabled = await store.updateEndpoint(account, endpoint.id, { enabled: true });
        expect(enabled).toMatchObject({ enabled: true, disabledReason: null });
      });

      it("disables an endpoint that has failed for 5 days straight, and not one that succeeded between", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        const run = async (outcome: AttemptOutcome) => {
          await store.publishEvents([event(account)]);
          const [c] = await claim();
          await complete(c!, outcome, "w1", false);
        };
        await run(fail());
        clock.advance(FAILING_DISABLES_AFTER_MS / 2);
        await run(ok());
        clock.advance(FAILING_DISABLES_AFTER_MS / 2);
        await run(fail());
        expect((await store.getEndpoint(account, endpoint.id))?.enabled).toBe(true);
        clock.advance(FAILING_DISABLES_AFTER_MS - 1);
        await run(fail());
        expect((await store.getEndpoint(account, endpoint.id))?.enabled).toBe(true);
        clock.advance(1);
        await run(fail());
        const disabled = await store.getEndpoint(account, endpoint.id);
        expect(disabled?.enabled).toBe(false);
        expect(disabled?.disabledReason).toMatch(/5 days/);
      });

      it("fails an attempt whose worker vanished once its lease lapses, and attempts the event again", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        const e = event(account);
        await store.publishEvents([e]);
        const [lost] = await claim("dead");
        clock.advance(LEASE_MS - 1);
        expect(await claim("w2")).toEqual([]);
        clock.advance(1);
        const [again] = await claim("w2");
        expect(again?.event).toEqual(e);
        expect(again?.delivery.attempt).toBe(2);
        // The vanished worker's late answer changes nothing: another holds the endpoint now.
        expect(await complete(lost!, ok(), "dead")).toEqual({ recorded: false, next: null });
        await complete(again!, ok(), "w2");
        const entries = await log(account, endpoint.id);
        expect(entries.map((d) => [d.attempt, d.status, d.error])).toEqual([
          [2, "succeeded", null],
          [1, "failed", INTERRUPTED_ERROR],
        ]);
      });

      it("lets a worker that stops take no next attempt, and the endpoint go to another", async () => {
        const account = newId("account");
        await createEndpoint(account);
        await store.publishEvents([event(account), event(account)]);
        const [c] = await claim("w1");
        expect(await complete(c!, ok(), "w1", false)).toEqual({ recorded: true, next: null });
        const [taken] = await claim("w2");
        expect(taken?.delivery.attempt).toBe(1);
        expect(await claim("w3")).toEqual([]);
      });

      it("signs with the previous secret as well for the time given after a rotation", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account, {}, "whsec_old");
        const rotated = await store.rotateSecret(account, endpoint.id, "whsec_new", 10_000);
        expect(rotated).toMatchObject({ id: endpoint.id });
        await store.publishEvents([event(account)]);
        const [c] = await claim();
        expect(c?.endpoint.secrets).toEqual(["whsec_new", "whsec_old"]);
        await complete(c!, ok());
        clock.advance(10_000);
        await store.publishEvents([event(account)]);
        const [later] = await claim();
        expect(later?.endpoint.secrets).toEqual(["whsec_new"]);
      });
    });

    describe("claiming and recording in batches", () => {
      const ids = (claims: Claim[]) => claims.map((c) => [c.endpoint.id, c.event.id]);

      it("claims several due attempts per endpoint, in order, and records several endpoints' outcomes at once", async () => {
        const account = newId("account");
        const one = await createEndpoint(account);
        const two = await createEndpoint(account);
        const events = [event(account), event(account), event(account)];
        await store.publishEvents([events[0]!]);
        clock.advance(1);
        await store.publishEvents(events.slice(1));
        const claims = await claim("w1", 10, 2);
        // Each endpoint's two oldest, together and in order; the third waits for the next run.
        const runs = [one.id, two.id].map((id) => claims.filter((c) => c.endpoint.id === id));
        expect(claims.map((c) => c.endpoint.id)).toEqual(runs.flat().map((c) => c.endpoint.id));
        for (const run of runs) {
          expect(run.map((c) => c.event.id)).toEqual([events[0]!.id, events[1]!.id]);
          expect(run.map((c) => c.delivery.attempt)).toEqual([1, 1]);
        }
        expect(claims[0]!.event).toEqual(events[0]);
        expect(await claim("w2", 10, 2)).toEqual([]);

        const result = await record(
          runs.flat().map((c) => [c, ok()]),
          { perEndpoint: 2 },
        );
        expect(result.recorded).toEqual([true, true, true, true]);
        expect(ids(result.next).sort()).toEqual(
          [
            [one.id, events[2]!.id],
            [two.id, events[2]!.id],
          ].sort(),
        );
        // Still held: the next run is this worker's.
        expect(await claim("w2")).toEqual([]);
        const last = await record(result.next.map((c) => [c, ok()]));
        expect(last).toEqual({ recorded: [true, true], next: [] });
        for (const endpoint of [one, two]) {
          const entries = await log(account, endpoint.id);
          expect(entries.map((d) => [d.eventId, d.status])).toEqual(
            [...events].reverse().map((e) => [e.id, "succeeded"]),
          );
        }
        // Let go: new work goes to whoever claims first.
        await store.publishEvents([event(account)]);
        expect(await claim("w2")).toHaveLength(2);
      });

      it("takes back the attempts a worker hands back unmade, for itself or, stopping, for anyone", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        const events = [event(account), event(account), event(account)];
        await store.publishEvents(events);
        const [first, second, third] = await claim("w1", 10, 3);
        expect(third?.event.id).toBe(events[2]!.id);
        // The first failed, so the run stopped: the other two are handed back and taken again at once.
        const result = await record([[first!, fail(503)]], { unsent: [second!, third!], perEndpoint: 3 });
        expect(result.recorded).toEqual([true]);
        expect(result.next.map((c) => c.delivery.id)).toEqual([second!.delivery.id, third!.delivery.id]);
        // A stopping worker hands them back for another.
        const stopped = await record([], { unsent: result.next, claimNext: false });
        expect(stopped).toEqual({ recorded: [], next: [] });
        const taken = await claim("w2", 10, 3);
        expect(taken.map((c) => c.delivery.id)).toEqual([second!.delivery.id, third!.delivery.id]);
        await record(
          taken.map((c) => [c, ok()]),
          { worker: "w2" },
        );
        const entries = await log(account, endpoint.id);
        // Newest first: the retry of the failed one is the newest entry.
        expect(entries.map((d) => [d.eventId, d.attempt, d.status])).toEqual([
          [events[0]!.id, 2, "pending"],
          [events[2]!.id, 1, "succeeded"],
          [events[1]!.id, 1, "succeeded"],
          [events[0]!.id, 1, "failed"],
        ]);
      });

      it("records the outcomes a worker still holds, and none of an endpoint taken over", async () => {
        const account = newId("account");
        const slow = await createEndpoint(account);
        await store.publishEvents([event(account)]);
        const [lost] = await claim("w1");
        clock.advance(LEASE_MS);
        const fast = await createEndpoint(account);
        await store.publishEvents([event(account, "agent.deleted")]);
        // w2 takes the lapsed endpoint over (failing the lost attempt as interrupted, and scheduling it again)
        // with all its due attempts, and the new endpoint.
        const taken = await claim("w2", 10, 3);
        expect(taken.filter((c) => c.endpoint.id === slow.id)).toHaveLength(2);
        expect(taken.filter((c) => c.endpoint.id === fast.id)).toHaveLength(1);
        const [mine] = await claim("w1");
        expect(mine).toBeUndefined();
        const result = await record(
          [[lost!, ok()], ...taken.map((c): [Claim, AttemptOutcome] => [c, ok()])],
          { worker: "w2" },
        );
        expect(result.recorded).toEqual([false, true, true, true]);
        expect(result.next).toEqual([]);
        expect((await log(account, slow.id)).map((d) => [d.eventId, d.attempt, d.status, d.error])).toEqual([
          [lost!.event.id, 2, "succeeded", null],
          [expect.any(String), 1, "succeeded", null],
          [lost!.event.id, 1, "failed", INTERRUPTED_ERROR],
        ]);
      });

      it("applies each outcome in order: a 410 disables its endpoint, failing what was handed back, not the others", async () => {
        const account = newId("account");
        const gone = await createEndpoint(account);
        const fine = await createEndpoint(account);
        await store.publishEvents([event(account), event(account), event(account)]);
        const claims = await claim("w1", 10, 3);
        const of = (id: string) => claims.filter((c) => c.endpoint.id === id);
        const [a, b, c] = of(gone.id);
        const result = await record(
          [[a!, ok()], [b!, fail(410)], ...of(fine.id).map((x): [Claim, AttemptOutcome] => [x, ok()])],
          { unsent: [c!] },
        );
        expect(result).toEqual({ recorded: [true, true, true, true, true], next: [] });
        expect(await store.getEndpoint(account, gone.id)).toMatchObject({
          enabled: false,
          disabledReason: "The endpoint answered 410 Gone.",
        });
        expect((await log(account, gone.id)).map((d) => [d.status, d.error])).toEqual([
          ["failed", ENDPOINT_DISABLED_ERROR],
          ["failed", "the endpoint answered HTTP 410"],
          ["succeeded", null],
        ]);
        expect((await log(account, fine.id)).map((d) => d.status)).toEqual([
          "succeeded",
          "succeeded",
          "succeeded",
        ]);
        await store.updateEndpoint(account, gone.id, { enabled: true });
        await store.publishEvents([event(account)]);
        expect((await claim()).map((x) => x.endpoint.id).sort()).toEqual([gone.id, fine.id].sort());
      });

      it("fails what is handed back of an endpoint its owner disabled meanwhile, and lets it go", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        await store.publishEvents([event(account), event(account)]);
        const [made, unmade] = await claim("w1", 10, 2);
        // Taken by a worker, so not failed by the disabling; the one made is recorded without a retry.
        await store.updateEndpoint(account, endpoint.id, { enabled: false });
        const result = await record([[made!, fail(500)]], { unsent: [unmade!] });
        expect(result).toEqual({ recorded: [true], next: [] });
        expect((await log(account, endpoint.id)).map((d) => [d.status, d.error])).toEqual([
          ["failed", ENDPOINT_DISABLED_ERROR],
          ["failed", "the endpoint answered HTTP 500"],
        ]);
        await store.updateEndpoint(account, endpoint.id, { enabled: true });
        expect(await claim("w2")).toEqual([]);
      });
    });

    describe("tests, redeliveries and the log", () => {
      it("sends a test event to one endpoint whatever it subscribes to, and refuses a disabled one", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account, { events: ["agent.deleted"] });
        const test = event(account, "webhook.test", { webhookId: endpoint.id });
        const delivery = await store.sendTestEvent(account, endpoint.id, test);
        expect(delivery).toMatchObject({
          endpointId: endpoint.id,
          eventId: test.id,
          eventType: "webhook.test",
        });
        const [c] = await claim();
        expect(c?.event).toEqual(test);
        await store.updateEndpoint(account, endpoint.id, { enabled: false });
        const error = await store
          .sendTestEvent(account, endpoint.id, event(account, "webhook.test"))
          .catch((e: unknown) => e);
        expect(error).toMatchObject({ code: "INVALID_REQUEST", details: [{ field: "enabled" }] });
      });

      it("redelivers an event as a new attempt that is not retried", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        const e = event(account);
        await store.publishEvents([e]);
        const [c] = await claim();
        await complete(c!, ok());
        const redelivery = await store.redeliver(account, endpoint.id, c!.delivery.id);
        expect(redelivery).toMatchObject({ eventId: e.id, attempt: 2, status: "pending" });
        expect(redelivery.id).not.toBe(c!.delivery.id);
        const [again] = await claim();
        expect(again?.event).toEqual(e);
        await complete(again!, fail(500));
        clock.advance(60_000);
        expect(await claim()).toEqual([]);
        await expect(store.redeliver(account, endpoint.id, newId("delivery"))).rejects.toMatchObject({
          code: "DELIVERY_NOT_FOUND",
        });
        await expect(store.redeliver(account, newId("webhook"), c!.delivery.id)).rejects.toMatchObject({
          code: "WEBHOOK_NOT_FOUND",
        });
      });

      it("disabling an endpoint fails its pending attempts", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        await store.publishEvents([event(account)]);
        await store.updateEndpoint(account, endpoint.id, { enabled: false });
        expect((await log(account, endpoint.id)).map((d) => [d.status, d.error])).toEqual([
          ["failed", ENDPOINT_DISABLED_ERROR],
        ]);
        await store.updateEndpoint(account, endpoint.id, { enabled: true });
        expect(await claim()).toEqual([]);
      });

      it("pages the log newest first, either way from a cursor", async () => {
        const account = newId("account");
        const endpoint = await createEndpoint(account);
        for (let i = 0; i < 5; i++) await store.publishEvents([event(account)]);
        const all = await log(account, endpoint.id);
        const ids = all.map((d) => d.id);
        expect([...ids].sort().reverse()).toEqual(ids);
        const page = (query: { limit: number; before?: string; after?: string; order?: "asc" | "desc" }) =>
          store.listDeliveries(account, endpoint.id, { order: "desc", ...query });
        const first = await page({ limit: 2 });
        expect(first?.items.map((d) => d.id)).toEqual(ids.slice(0, 2));
        expect(first?.hasMore).toBe(true);
        const second = await page({ limit: 2, before: ids[1]! });
        expect(second?.items.map((d) => d.id)).toEqual(ids.slice(2, 4));
        const last = await page({ limit: 2, before: ids[3]! });
        expect(last).toEqual({ items: [all[4]], hasMore: false });
        const newer = await page({ limit: 2, after: ids[4]! });
        expect(newer?.items.map((d) => d.id)).toEqual(ids.slice(2, 4));
        expect(newer?.hasMore).toBe(true);
        expect((await page({ limit: 2, after: ids[1]! }))?.hasMore).toBe(false);
        // Oldest first: from the oldest end, then on with after; before still takes the entries nearest below.
        const ascending = [...ids].reverse();
        const oldest = await page({ limit: 2, order: "asc" });
        expect(oldest).toEqual({ items: [all[4], all[3]], hasMore: true });
        const onwards = await page({ limit: 2, order: "asc", after: ascending[1]! });
        expect(onwards?.items.map((d) => d.id)).toEqual(ascending.slice(2, 4));
        expect(onwards?.hasMore).toBe(true);
        const below = await page({ limit: 2, order: "asc", before: ascending[3]! });
        expect(below?.items.map((d) => d.id)).toEqual(ascending.slice(1, 3));
        expect(below?.hasMore).toBe(true);
        await expect(page({ limit: 2, before: newId("delivery") })).rejects.toMatchObject({
          code: "INVALID_REQUEST",
          details: [{ field: "before" }],
        });
        const other = await createEndpoint(account);
        await expect(
          store.listDeliveries(account, other.id, { limit: 2, after: ids[0]!, order: "desc" }),
        ).rejects.toMatchObject({ code: "INVALID_REQUEST", details: [{ field: "after" }] });
      });
    });
  });
}
