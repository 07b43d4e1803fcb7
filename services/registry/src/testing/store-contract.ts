import { FULL_ACCESS, isId, type Limits, newId, SCOPES, type Tier } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { sessionUsable } from "../store/console-sessions.js";
import type {
  AccountRecord,
  AgentRecord,
  ApiKeyRecord,
  CreateUnderKey,
  IdempotencyClaim,
  ListAgentsQuery,
  NewApiKey,
  OutboxChannel,
  OutboxEvent,
  RegistryStore,
  StatusReason,
} from "../store/types.js";
import { agentFields } from "./agent-fields.js";
import { auditStoreContract } from "./audit-contract.js";
import { budgetStoreContract } from "./budget-contract.js";

/**
 * The behaviour every RegistryStore must have. Each implementation runs it unchanged with its own `open`, which
 * must return an empty store; `cleanup` runs after each test, possibly after the test closed the store itself.
 */
export function registryStoreContract(
  name: string,
  open: () => Promise<{ store: RegistryStore; cleanup(): Promise<void> }>,
): void {
  budgetStoreContract(name, open);
  auditStoreContract(name, open);
  describe(`RegistryStore contract: ${name}`, () => {
    let store: RegistryStore;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await open());
    });

    afterEach(async () => {
      await cleanup();
    });

    let accountSeq = 0;
    const newAccount = (tier: Tier = "standard", limitOverrides: Partial<Limits> = {}) =>
      store.createAccount({ name: `account-${++accountSeq}-${newId("request")}`, tier, limitOverrides });

    describe("accounts", () => {
      it("creates an account and reads it back by id and by name", async () => {
        const created = await store.createAccount({
          name: "acme",
          tier: "enterprise",
          limitOverrides: { maxAgents: 500, requestsPerMinute: 1000 },
        });
        expect(created).toEqual({
          id: expect.stringMatching(/^acct_[0-9A-Z]{26}$/),
          name: "acme",
          tier: "enterprise",
          limitOverrides: { maxAgents: 500, requestsPerMinute: 1000 },
          createdAt: expect.stringMatching(ISO_MS),
        });
        expect(await store.getAccount(created.id)).toEqual(created);
        expect(await store.getAccountByName("acme")).toEqual(created);
      });

      it("answers null for an unknown account", async () => {
        expect(await store.getAccount(newId("account"))).toBeNull();
        expect(await store.getAccountByName("nobody")).toBeNull();
      });

      it("refuses a second account with the same name", async () => {
        await store.createAccount({ name: "acme", tier: "standard", limitOverrides: {} });
        const error = await appError(store.createAccount({ name: "acme", tier: "pro", limitOverrides: {} }));
        expect(error.code).toBe("INVALID_REQUEST");
        expect(error.message).toBe("an account named acme already exists");
        expect(await store.listAccounts()).toHaveLength(1);
      });

      it("changes an account's plan, replacing its overrides whole", async () => {
        const account = await newAccount("enterprise", { maxAgents: 7, requestsPerMinute: 900 });
        const changed = await store.updateAccount(account.id, { limitOverrides: { maxAgents: 9 } });
        expect(changed).toEqual({ ...account, limitOverrides: { maxAgents: 9 } });
        const pro = await store.updateAccount(account.id, { tier: "pro", limitOverrides: {} });
        expect(pro).toEqual({ ...account, tier: "pro", limitOverrides: {} });
        expect(await store.getAccount(account.id)).toEqual(pro);
        expect(await store.updateAccount(newId("account"), { tier: "pro" })).toBeNull();
      });

      it("lists accounts oldest first", async () => {
        const a = await newAccount();
        const b = await newAccount("pro");
        const c = await newAccount("enterprise", { maxAgents: 7 });
        expect(await store.listAccounts()).toEqual([a, b, c]);
      });
    });

    describe("agents", () => {
      let account: AccountRecord;
      beforeEach(async () => {
        account = await newAccount();
      });

      it("creates an active agent with the given fields", async () => {
        const input = agentFields({
          name: "Ünïcode ✓ 😀",
          bio: ["first", "second"],
          personality: { tone: "warm", traits: ["a", { nested: [1, 2.5, null, true] }] },
          clients: ["discord", { type: "telegram", token: null }],
          settings: { voice: { speed: 1.25 } },
          modelProvider: "openai",
          model: "gpt-4o",
          plugins: ["search", { name: "calc", enabled: false, config: {} }],
        });
        const agent = await store.createAgent(account.id, input);
        expect(agent).toEqual({
          ...input,
          id: expect.stringMatching(/^agt_[0-9A-Z]{26}$/),
          accountId: account.id,
          status: "active",
          statusReason: null,
          createdAt: expect.stringMatching(ISO_MS),
          updatedAt: agent.createdAt,
        });
        expect(await store.getAgent(account.id, agent.id)).toEqual(agent);
      });

      it("keeps model fields null when not given", async () => {
        const agent = await store.createAgent(account.id, agentFields());
        expect(agent.modelProvider).toBeNull();
        expect(agent.model).toBeNull();
        expect((await store.getAgent(account.id, agent.id))?.modelProvider).toBeNull();
      });

      it("refuses to create an agent for an unknown account", async () => {
        const error = await appError(store.createAgent(newId("account"), agentFields()));
        expect(error.code).toBe("UNAUTHORIZED");
      });

      it("answers null for an unknown agent", async () => {
        expect(await store.getAgent(account.id, newId("agent"))).toBeNull();
        expect(await store.updateAgent(account.id, newId("agent"), { name: "x" })).toBeNull();
        expect(await store.reportAgentHealth(account.id, newId("agent"), null)).toBeNull();
        expect(await store.deleteAgent(account.id, newId("agent"))).toBe(false);
      });

      it("treats another account's agent exactly like a missing one", async () => {
        const other = await newAccount();
        const agent = await store.createAgent(other.id, agentFields({ name: "theirs" }));
        await drainEvents(store);

        expect(await store.getAgent(account.id, agent.id)).toBeNull();
        expect(
          await store.updateAgent(account.id, agent.id, { name: "mine now", status: "inactive" }),
        ).toBeNull();
        expect(await store.reportAgentHealth(account.id, agent.id, failure())).toBeNull();
        expect(await store.deleteAgent(account.id, agent.id)).toBe(false);
        expect((await store.listAgents(account.id, query())).total).toBe(0);

        expect(await store.getAgent(other.id, agent.id)).toEqual(agent);
        for (const channel of CHANNELS) expect(await store.unpublishedEvents(channel, 100)).toEqual([]);
      });

      describe("conditional writes (If-Match)", () => {
        it("updates only while the agent still has the version the write names", async () => {
          const agent = await store.createAgent(account.id, agentFields({ name: "v1" }));
          const updated = await store.updateAgent(account.id, agent.id, { name: "v2" }, agent.updatedAt);
          expect(updated).toMatchObject({ name: "v2" });
          await drainEvents(store);

          const stale = await appError(
            store.updateAgent(account.id, agent.id, { name: "v3" }, agent.updatedAt),
          );
          expect(stale.code).toBe("PRECONDITION_FAILED");
          expect(stale.message).toContain(`GET /v1/agents/${agent.id}`);
          expect(await store.getAgent(account.id, agent.id)).toEqual(updated);
          for (const channel of CHANNELS) expect(await store.unpublishedEvents(channel, 100)).toEqual([]);
          expect(
            await store.updateAgent(account.id, newId("agent"), { name: "x" }, agent.updatedAt),
          ).toBeNull();
        });

        it("gives each change of an agent its own updatedAt, even within one millisecond", async () => {
          const agent = await store.createAgent(account.id, agentFields());
          const versions = [agent.updatedAt];
          for (let i = 0; i < 5; i++) {
            versions.push((await store.updateAgent(account.id, agent.id, { name: `n${i}` }))!.updatedAt);
          }
          versions.push((await store.reportAgentHealth(account.id, agent.id, failure()))!.updatedAt);
          for (let i = 1; i < versions.length; i++) expect(versions[i]! > versions[i - 1]!).toBe(true);
        });

        it("lets exactly one of concurrent writes based on one version through", async () => {
          const agent = await store.createAgent(account.id, agentFields({ name: "base" }));
          const outcomes = await Promise.allSettled(
            Array.from({ length: 6 }, (_, i) =>
              store.updateAgent(account.id, agent.id, { name: `writer ${i}` }, agent.updatedAt),
            ),
          );
          const won = outcomes.filter((outcome) => outcome.status === "fulfilled");
          const lost = outcomes.filter((outcome) => outcome.status === "rejected");
          expect(won).toHaveLength(1);
          expect(lost.map((outcome) => (outcome.reason as AppError).code)).toEqual(
            Array(5).fill("PRECONDITION_FAILED"),
          );
          const winner = (won[0] as PromiseFulfilledResult<AgentRecord | null>).value;
          expect(await store.getAgent(account.id, agent.id)).toEqual(winner);
        });

        it("deletes only while the agent still has the version the delete names", async () => {
          const agent = await store.createAgent(account.id, agentFields());
          const updated = await store.updateAgent(account.id, agent.id, { name: "changed" });
          const stale = await appError(store.deleteAgent(account.id, agent.id, agent.updatedAt));
          expect(stale.code).toBe("PRECONDITION_FAILED");
          expect(await store.getAgent(account.id, agent.id)).toEqual(updated);
          expect(await store.deleteAgent(account.id, agent.id, updated!.updatedAt)).toBe(true);
          expect(await store.getAgent(account.id, agent.id)).toBeNull();
          expect(await store.deleteAgent(account.id, agent.id, updated!.updatedAt)).toBe(false);
        });
      });

      describe("updates", () => {
        it("changes only the fields in the patch", async () => {
          const agent = await store.createAgent(
            account.id,
            agentFields({ name: "before", bio: ["b"], goals: ["g"], model: "m", settings: { a: 1 } }),
          );
          await tick();
          const updated = await store.updateAgent(account.id, agent.id, { name: "after", knowledge: ["k"] });
          expect(updated).toEqual({
            ...agent,
            name: "after",
            knowledge: ["k"],
            updatedAt: expect.stringMatching(ISO_MS),
          });
          expect(updated!.updatedAt > agent.updatedAt).toBe(true);
          expect(await store.getAgent(account.id, agent.id)).toEqual(updated);
        });

        it("replaces arrays and objects whole", async () => {
          const agent = await store.createAgent(
            account.id,
            agentFields({ bio: ["a", "b"], personality: { x: 1, y: 2 }, plugins: ["p"] }),
          );
          const updated = await store.updateAgent(account.id, agent.id, {
            bio: [],
            personality: { z: 3 },
            plugins: [{ name: "q" }],
          });
          expect(updated).toMatchObject({ bio: [], personality: { z: 3 }, plugins: [{ name: "q" }] });
        });

        it("resets modelProvider and model to the default with null", async () => {
          const agent = await store.createAgent(
            account.id,
            agentFields({ modelProvider: "anthropic", model: "claude" }),
          );
          const onlyModel = await store.updateAgent(account.id, agent.id, { model: null });
          expect(onlyModel).toMatchObject({ modelProvider: "anthropic", model: null });
          const both = await store.updateAgent(account.id, agent.id, { modelProvider: null });
          expect(both).toMatchObject({ modelProvider: null, model: null });
          expect(await store.getAgent(account.id, agent.id)).toMatchObject({
            modelProvider: null,
            model: null,
          });
        });

        it("sets the status given in the patch", async () => {
          const agent = await store.createAgent(account.id, agentFields());
          expect(await store.updateAgent(account.id, agent.id, { status: "inactive" })).toMatchObject({
            status: "inactive",
            statusReason: null,
          });
          expect(await store.updateAgent(account.id, agent.id, { status: "active" })).toMatchObject({
            status: "active",
          });
        });

        it("takes an agent out of error when its model configuration changes", async () => {
          for (const patch of [{ settings: { k: "v" } }, { model: "other" }, { modelProvider: null }]) {
            const agent = await inError(store, account.id);
            expect(await store.updateAgent(account.id, agent.id, patch)).toMatchObject({
              ...patch,
              status: "active",
              statusReason: null,
            });
          }
        });

        it("keeps an agent in error when other fields change", async () => {
          const agent = await inError(store, account.id);
          const updated = await store.updateAgent(account.id, agent.id, { name: "renamed", bio: ["x"] });
          expect(updated).toMatchObject({
            name: "renamed",
            status: "error",
            statusReason: agent.statusReason,
          });
        });

        it("lets a status in the patch win over the reconfiguration rule", async () => {
          const agent = await inError(store, account.id);
          const updated = await store.updateAgent(account.id, agent.id, { model: "m2", status: "inactive" });
          expect(updated).toMatchObject({ model: "m2", status: "inactive", statusReason: null });
        });
      });

      describe("health reports", () => {
        it("puts an active agent in error with the reason", async () => {
          const agent = await store.createAgent(account.id, agentFields());
          const reason = failure();
          const reported = await store.reportAgentHealth(account.id, agent.id, reason);
          expect(reported).toMatchObject({ status: "error", statusReason: reason });
          expect(await store.getAgent(account.id, agent.id)).toEqual(reported);
        });

        it("takes an agent out of error on success", async () => {
          const agent = await inError(store, account.id);
          const reported = await store.reportAgentHealth(account.id, agent.id, null);
          expect(reported).toMatchObject({ status: "active", statusReason: null });
          expect(await store.getAgent(account.id, agent.id)).toEqual(reported);
        });

        it("leaves an inactive agent inactive", async () => {
          const agent = await store.createAgent(account.id, agentFields());
          await store.updateAgent(account.id, agent.id, { status: "inactive" });
          expect(await store.reportAgentHealth(account.id, agent.id, failure())).toMatchObject({
            status: "inactive",
            statusReason: null,
          });
          expect(await store.reportAgentHealth(account.id, agent.id, null)).toMatchObject({
            status: "inactive",
          });
        });

        it("leaves an active agent unchanged on success", async () => {
          const agent = await store.createAgent(account.id, agentFields());
          expect(await store.reportAgentHealth(account.id, agent.id, null)).toEqual(agent);
        });
      });

      describe("deletion", () => {
        it("removes the agent", async () => {
          const agent = await store.createAgent(account.id, agentFields());
          const kept = await store.createAgent(account.id, agentFields());
          expect(await store.deleteAgent(account.id, agent.id)).toBe(true);
          expect(await store.getAgent(account.id, agent.id)).toBeNull();
          expect(await store.updateAgent(account.id, agent.id, { name: "x" })).toBeNull();
          expect(await store.deleteAgent(account.id, agent.id)).toBe(false);
          const list = await store.listAgents(account.id, query());
          expect(list.items.map((a) => a.id)).toEqual([kept.id]);
          expect(list.total).toBe(1);
        });
      });

      describe("quota", () => {
        it("allows exactly maxAgents agents", async () => {
          const small = await newAccount("enterprise", { maxAgents: 3 });
          for (let i = 0; i < 3; i++) await store.createAgent(small.id, agentFields());
          const error = await appError(store.createAgent(small.id, agentFields()));
          expect(error.code).toBe("INSUFFICIENT_QUOTA");
          expect(error.message).toContain("maxAgents");
          expect(error.message).toContain("3");
          expect((await store.listAgents(small.id, query())).total).toBe(3);
        });

        it("applies the tier's default of 100 agents", async () => {
          for (let i = 0; i < 100; i++)
            await store.createAgent(account.id, agentFields({ name: `agent ${i}` }));
          expect((await appError(store.createAgent(account.id, agentFields()))).code).toBe(
            "INSUFFICIENT_QUOTA",
          );
        });

        it("frees a place when an agent is deleted", async () => {
          const small = await newAccount("enterprise", { maxAgents: 1 });
          const agent = await store.createAgent(small.id, agentFields());
          expect((await appError(store.createAgent(small.id, agentFields()))).code).toBe(
            "INSUFFICIENT_QUOTA",
          );
          await store.deleteAgent(small.id, agent.id);
          await expect(store.createAgent(small.id, agentFields())).resolves.toMatchObject({
            status: "active",
          });
        });

        it("counts each account separately", async () => {
          const one = await newAccount("enterprise", { maxAgents: 1 });
          const two = await newAccount("enterprise", { maxAgents: 1 });
          await store.createAgent(one.id, agentFields());
          await expect(store.createAgent(two.id, agentFields())).resolves.toMatchObject({
            accountId: two.id,
          });
        });

        it("never exceeds the quota with simultaneous creates", async () => {
          const small = await newAccount("enterprise", { maxAgents: 4 });
          const results = await Promise.allSettled(
            Array.from({ length: 10 }, () => store.createAgent(small.id, agentFields())),
          );
          expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(4);
          const rejected = results.filter((r) => r.status === "rejected");
          expect(rejected.map((r) => (r.reason as AppError).code)).toEqual(
            Array(6).fill("INSUFFICIENT_QUOTA"),
          );
          expect((await store.listAgents(small.id, query())).total).toBe(4);
        });
      });
    });

    describe("agent secrets", () => {
      let account: AccountRecord;
      let agent: AgentRecord;
      beforeEach(async () => {
        account = await newAccount();
        agent = await store.createAgent(account.id, agentFields());
      });

      it("keeps sealed forms by name, lists names and times sorted, and replaces on put", async () => {
        const first = await store.putAgentSecret(account.id, agent.id, "b_token", "v1.sealed-b");
        expect(first).toEqual({ name: "b_token", updatedAt: expect.stringMatching(ISO_MS) });
        await store.putAgentSecret(account.id, agent.id, "a_token", "v1.sealed-a");
        await tick();
        const replaced = await store.putAgentSecret(account.id, agent.id, "b_token", "v1.sealed-b2");
        expect(replaced!.updatedAt > first!.updatedAt).toBe(true);
        expect(await store.listAgentSecrets(account.id, agent.id)).toEqual([
          { name: "a_token", updatedAt: expect.stringMatching(ISO_MS) },
          { name: "b_token", updatedAt: replaced!.updatedAt },
        ]);
        expect(await store.sealedAgentSecrets(account.id, agent.id, ["b_token", "missing"])).toEqual({
          b_token: "v1.sealed-b2",
        });
      });

      it("deletes one secret, and tells a missing secret from a missing agent", async () => {
        await store.putAgentSecret(account.id, agent.id, "token", "v1.x");
        expect(await store.deleteAgentSecret(account.id, agent.id, "token")).toBe(true);
        expect(await store.deleteAgentSecret(account.id, agent.id, "token")).toBe(false);
        expect(await store.listAgentSecrets(account.id, agent.id)).toEqual([]);
        expect(await store.deleteAgentSecret(account.id, newId("agent"), "token")).toBeNull();
      });

      it("treats another account's agent as missing", async () => {
        const other = await newAccount();
        await store.putAgentSecret(account.id, agent.id, "token", "v1.x");
        expect(await store.putAgentSecret(other.id, agent.id, "token", "v1.y")).toBeNull();
        expect(await store.listAgentSecrets(other.id, agent.id)).toBeNull();
        expect(await store.sealedAgentSecrets(other.id, agent.id, ["token"])).toBeNull();
        expect(await store.deleteAgentSecret(other.id, agent.id, "token")).toBeNull();
        expect(await store.sealedAgentSecrets(account.id, agent.id, ["token"])).toEqual({ token: "v1.x" });
      });

      it("removes an agent's secrets with it", async () => {
        await store.putAgentSecret(account.id, agent.id, "token", "v1.x");
        const kept = await store.createAgent(account.id, agentFields());
        await store.putAgentSecret(account.id, kept.id, "token", "v1.kept");
        expect(await store.deleteAgent(account.id, agent.id)).toBe(true);
        expect(await store.listAgentSecrets(account.id, agent.id)).toBeNull();
        expect(await store.sealedAgentSecrets(account.id, agent.id, ["token"])).toBeNull();
        expect(await store.sealedAgentSecrets(account.id, kept.id, ["token"])).toEqual({ token: "v1.kept" });
      });
    });

    describe("knowledge search", () => {
      let account: AccountRecord;
      beforeEach(async () => {
        account = await newAccount();
      });
      const texts = (hits: { text: string }[] | null) => hits?.map((hit) => hit.text);

      it("finds entries holding any of the words, stemmed, best first, with their positions", async () => {
        const agent = await store.createAgent(
          account.id,
          agentFields({
            knowledge: [
              "Our office opens at nine.",
              "Refunds are processed within five business days.",
              "Shipping to Canada takes a week; shipping refunds are rare.",
              "The café serves crêpes.",
            ],
          }),
        );
        expect(await store.searchKnowledge(account.id, agent.id, ["refund"], 10)).toEqual([
          { index: 1, text: "Refunds are processed within five business days." },
          { index: 2, text: "Shipping to Canada takes a week; shipping refunds are rare." },
        ]);
        expect(texts(await store.searchKnowledge(account.id, agent.id, ["shipped"], 10))).toEqual([
          "Shipping to Canada takes a week; shipping refunds are rare.",
        ]);
        // An entry with more of the words comes first.
        const both = await store.searchKnowledge(account.id, agent.id, ["refunds", "canada"], 10);
        expect(both?.[0]?.index).toBe(2);
        expect(await store.searchKnowledge(account.id, agent.id, ["refunds"], 1)).toHaveLength(1);
        expect(await store.searchKnowledge(account.id, agent.id, ["nothing"], 10)).toEqual([]);
        expect(await store.searchKnowledge(account.id, agent.id, [], 10)).toEqual([]);
      });

      it("keeps the index in step with every update and delete, and searches one agent only", async () => {
        const agent = await store.createAgent(account.id, agentFields({ knowledge: ["apples are red"] }));
        const other = await store.createAgent(account.id, agentFields({ knowledge: ["apples are green"] }));
        await store.updateAgent(account.id, agent.id, {
          knowledge: ["bananas are yellow", "apples are sour"],
        });
        expect(await store.searchKnowledge(account.id, agent.id, ["apples"], 10)).toEqual([
          { index: 1, text: "apples are sour" },
        ]);
        expect(texts(await store.searchKnowledge(account.id, agent.id, ["red"], 10))).toEqual([]);
        // A change that leaves knowledge alone leaves the index alone.
        await store.updateAgent(account.id, agent.id, { name: "renamed" });
        await store.reportAgentHealth(account.id, agent.id, failure());
        expect(texts(await store.searchKnowledge(account.id, agent.id, ["bananas"], 10))).toEqual([
          "bananas are yellow",
        ]);
        await store.deleteAgent(account.id, agent.id);
        expect(await store.searchKnowledge(account.id, agent.id, ["apples"], 10)).toBeNull();
        expect(texts(await store.searchKnowledge(account.id, other.id, ["apples"], 10))).toEqual([
          "apples are green",
        ]);
      });

      it("treats another account's agent as missing", async () => {
        const agent = await store.createAgent(account.id, agentFields({ knowledge: ["secret plans"] }));
        const stranger = await newAccount();
        expect(await store.searchKnowledge(stranger.id, agent.id, ["plans"], 10)).toBeNull();
        expect(await store.searchKnowledge(account.id, newId("agent"), ["plans"], 10)).toBeNull();
      });
    });

    describe("listing", () => {
      let account: AccountRecord;
      beforeEach(async () => {
        account = await newAccount("enterprise", { maxAgents: 1000 });
      });

      const ids = (agents: AgentRecord[]) => agents.map((a) => a.id);

      it("keeps each total exact through creates, status changes, health reports and deletes, simultaneous ones too", async () => {
        const totals = async () => ({
          all: (await store.listAgents(account.id, query({ limit: 1 }))).total,
          active: (await store.listAgents(account.id, query({ limit: 1, status: "active" }))).total,
          inactive: (await store.listAgents(account.id, query({ limit: 1, status: "inactive" }))).total,
          error: (await store.listAgents(account.id, query({ limit: 1, status: "error" }))).total,
        });
        const agents = await Promise.all(
          Array.from({ length: 12 }, (_, i) => store.createAgent(account.id, agentFields({ name: `c${i}` }))),
        );
        await Promise.all([
          ...agents.slice(0, 4).map((a) => store.updateAgent(account.id, a.id, { status: "inactive" })),
          ...agents.slice(4, 6).map((a) => store.reportAgentHealth(account.id, a.id, failure())),
          ...agents.slice(10).map((a) => store.deleteAgent(account.id, a.id)),
        ]);
        // A change that keeps the status changes no count.
        await store.updateAgent(account.id, agents[0]!.id, { status: "inactive", name: "still inactive" });
        await store.deleteAgent(account.id, agents[4]!.id);
        expect(await totals()).toEqual({ all: 9, active: 4, inactive: 4, error: 1 });
        const other = await newAccount();
        await store.createAgent(other.id, agentFields());
        expect((await totals()).all).toBe(9);
      });

      it("sorts by creation time, newest first by default, ties broken by id", async () => {
        const created: AgentRecord[] = [];
        for (let i = 0; i < 8; i++)
          created.push(await store.createAgent(account.id, agentFields({ name: `a${i}` })));
        const asc = [...created].sort(by((a) => a.createdAt));
        const desc = await store.listAgents(account.id, query({ order: "desc" }));
        expect(ids(desc.items)).toEqual(ids(asc).reverse());
        const ascending = await store.listAgents(account.id, query({ order: "asc" }));
        expect(ids(ascending.items)).toEqual(ids(asc));
      });

      it("sorts by name by code point, ties broken by id in the same direction", async () => {
        // UTF-16 order would put the emoji (a surrogate pair) before U+FF21; code point order puts it after.
        const names = ["b", "B", "a", "\uFF21", "😀", "a", "b", "a"];
        const created = [];
        for (const name of names) created.push(await store.createAgent(account.id, agentFields({ name })));
        const expected = [...created].sort(by((a) => a.name, codePointCompare));
        expect(expected.map((a) => a.name)).toEqual(["B", "a", "a", "a", "b", "b", "\uFF21", "😀"]);

        const asc = await store.listAgents(account.id, query({ sortBy: "name", order: "asc" }));
        expect(ids(asc.items)).toEqual(ids(expected));
        const desc = await store.listAgents(account.id, query({ sortBy: "name", order: "desc" }));
        expect(ids(desc.items)).toEqual(ids(expected).reverse());
      });

      it("sorts by status name, ties broken by id in the same direction", async () => {
        const created = await statusMix(store, account.id);
        const expected = [...created].sort(by((a) => a.status));
        expect(expected.map((a) => a.status)).toEqual([
          "active",
          "active",
          "active",
          "error",
          "error",
          "inactive",
          "inactive",
        ]);
        const asc = await store.listAgents(account.id, query({ sortBy: "status", order: "asc" }));
        expect(ids(asc.items)).toEqual(ids(expected));
        const desc = await store.listAgents(account.id, query({ sortBy: "status", order: "desc" }));
        expect(ids(desc.items)).toEqual(ids(expected).reverse());
      });

      it("filters by status and counts only matching agents", async () => {
        const created = await statusMix(store, account.id);
        for (const status of ["active", "inactive", "error"] as const) {
          const page = await store.listAgents(account.id, query({ status, order: "asc" }));
          const expected = created.filter((a) => a.status === status).sort(by((a) => a.createdAt));
          expect(ids(page.items)).toEqual(ids(expected));
          expect(page.total).toBe(expected.length);
        }
      });

      it("pages with limit and page, and reports the total over all pages", async () => {
        const created: AgentRecord[] = [];
        for (let i = 0; i < 7; i++) created.push(await store.createAgent(account.id, agentFields()));
        const all = [...created].sort(by((a) => a.createdAt));
        const pageOf = (page: number) =>
          store.listAgents(account.id, query({ page, limit: 3, order: "asc" }));
        expect(await pageOf(1)).toEqual({ items: all.slice(0, 3), total: 7 });
        expect(await pageOf(2)).toEqual({ items: all.slice(3, 6), total: 7 });
        expect(await pageOf(3)).toEqual({ items: all.slice(6), total: 7 });
        expect(await pageOf(4)).toEqual({ items: [], total: 7 });
      });

      it("pages through ties without skipping or repeating", async () => {
        for (let i = 0; i < 9; i++) await store.createAgent(account.id, agentFields({ name: "same" }));
        const seen: string[] = [];
        for (let page = 1; page <= 3; page++) {
          const result = await store.listAgents(account.id, query({ sortBy: "name", page, limit: 4 }));
          seen.push(...ids(result.items));
        }
        expect(new Set(seen).size).toBe(9);
        expect(seen).toEqual([...seen].sort().reverse());
      });

      it("lists only the account's own agents", async () => {
        const other = await newAccount();
        await store.createAgent(other.id, agentFields());
        const mine = await store.createAgent(account.id, agentFields());
        expect(await store.listAgents(account.id, query())).toEqual({ items: [mine], total: 1 });
      });

      it("answers an empty page for an account without agents", async () => {
        expect(await store.listAgents(account.id, query())).toEqual({ items: [], total: 0 });
      });
    });

    describe("outbox", () => {
      let account: AccountRecord;
      beforeEach(async () => {
        account = await newAccount();
      });

      it("records an event for every change, in order, each with an event id of its own", async () => {
        const agent = await store.createAgent(account.id, agentFields({ name: "n" }));
        const renamed = await store.updateAgent(account.id, agent.id, { name: "m" });
        const paused = await store.updateAgent(account.id, agent.id, { status: "inactive" });
        await store.deleteAgent(account.id, agent.id);

        const events = await store.unpublishedEvents("conversation", 100);
        expect(events.map((e) => e.type)).toEqual([
          "agent.created",
          "agent.updated",
          "agent.updated",
          "agent.status_changed",
          "agent.deleted",
        ]);
        for (const event of events) {
          expect(event).toMatchObject({ accountId: account.id, agentId: agent.id });
          expect(event.createdAt).toMatch(ISO_MS);
          expect(isId("event", event.id)).toBe(true);
        }
        expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
        expect(isIncreasing(events.map((e) => e.seq))).toBe(true);
        expect(events[0]?.payload).toEqual({ agent: { ...agent } });
        expect(events[1]?.payload).toEqual({ agent: { ...renamed } });
        expect(events[2]?.payload).toEqual({ agent: { ...paused } });
        expect(events[3]?.payload).toEqual({ agent: { ...paused } });
        expect(events[4]?.payload).toEqual({ accountId: account.id, agentId: agent.id });
      });

      it("records status changes from health reports, and nothing when the status stays", async () => {
        const agent = await store.createAgent(account.id, agentFields());
        await drainEvents(store);
        const reason = failure();
        await store.reportAgentHealth(account.id, agent.id, reason);
        await store.reportAgentHealth(account.id, agent.id, { ...reason, message: "again" });
        await store.reportAgentHealth(account.id, agent.id, null);
        await store.reportAgentHealth(account.id, agent.id, null);
        const events = await store.unpublishedEvents("webhooks", 100);
        const agentOf = (event: OutboxEvent | undefined) => event?.payload.agent as Partial<AgentRecord>;
        expect(events.map((e) => [e.type, agentOf(e).status])).toEqual([
          ["agent.status_changed", "error"],
          ["agent.status_changed", "active"],
        ]);
        expect(agentOf(events[0]).statusReason).toEqual({ ...reason });
        expect(agentOf(events[1]).statusReason).toBeNull();
      });

      it("records nothing for a failed change", async () => {
        const full = await newAccount("enterprise", { maxAgents: 0 });
        await appError(store.createAgent(full.id, agentFields()));
        await store.deleteAgent(account.id, newId("agent"));
        await store.updateAgent(account.id, newId("agent"), { name: "x" });
        for (const channel of CHANNELS) expect(await store.unpublishedEvents(channel, 100)).toEqual([]);
      });

      it("keeps no copy of an agent's settings.secrets in its events", async () => {
        const agent = await store.createAgent(
          account.id,
          agentFields({ settings: { temperature: 1, secrets: { OPENAI_API_KEY: "sk-live-secret" } } }),
        );
        await store.updateAgent(account.id, agent.id, { status: "inactive" });
        const events = await store.unpublishedEvents("webhooks", 100);
        expect(events).toHaveLength(3);
        expect(JSON.stringify(events)).not.toContain("sk-live-secret");
        expect((await store.getAgent(account.id, agent.id))?.settings.secrets).toEqual({
          OPENAI_API_KEY: "sk-live-secret",
        });
      });

      it("hands out unpublished events oldest first, up to the limit, until marked published", async () => {
        for (let i = 0; i < 5; i++) await store.createAgent(account.id, agentFields());
        const first = await store.unpublishedEvents("conversation", 2);
        expect(first).toHaveLength(2);
        await store.markEventsPublished(
          "conversation",
          first.map((e) => e.seq),
        );
        const rest = await store.unpublishedEvents("conversation", 10);
        expect(rest).toHaveLength(3);
        expect(rest[0]!.seq).toBeGreaterThan(first[1]!.seq);
        await store.markEventsPublished(
          "conversation",
          rest.map((e) => e.seq),
        );
        await store.markEventsPublished("conversation", []);
        expect(await store.unpublishedEvents("conversation", 10)).toEqual([]);
      });

      it("keeps each channel's place apart, and an event's id is the same on every read", async () => {
        for (let i = 0; i < 3; i++) await store.createAgent(account.id, agentFields());
        const forConversation = await store.unpublishedEvents("conversation", 10);
        await store.markEventsPublished(
          "conversation",
          forConversation.map((e) => e.seq),
        );
        expect(await store.unpublishedEvents("conversation", 10)).toEqual([]);

        const forWebhooks = await store.unpublishedEvents("webhooks", 10);
        expect(forWebhooks).toEqual(forConversation);
        expect(await store.unpublishedEvents("webhooks", 10)).toEqual(forWebhooks);
        await store.markEventsPublished("webhooks", [forWebhooks[0]!.seq]);
        expect((await store.unpublishedEvents("webhooks", 10)).map((e) => e.id)).toEqual(
          forWebhooks.slice(1).map((e) => e.id),
        );
      });
    });

    describe("api keys", () => {
      let account: AccountRecord;
      beforeEach(async () => {
        account = await newAccount();
      });

      const newKey = (overrides: Partial<NewApiKey> = {}): { sha256: string; input: NewApiKey } => {
        const sha256 = randomHex();
        const input: NewApiKey = {
          accountId: account.id,
          name: "ci",
          scopes: ["agents:read", "messages:send"],
          expiresAt: null,
          sha256,
          prefix: "agentry_sk_abcdef",
          ...overrides,
        };
        return { sha256, input };
      };

      describe("under an Idempotency-Key claimed in the create's transaction", () => {
        const claim = { keyHash: "d".repeat(64), fingerprint: "POST /v1/api-keys {}" };
        const sealed = new Uint8Array([7, 7, 7, 1]);

        it("creates once; the same request again answers the key as created and its kept secret", async () => {
          const first = await store.createApiKeyUnderKey(newKey().input, { ...claim, secret: sealed });
          expect(first.outcome).toBe("created");
          const { apiKey } = (first as { created: { apiKey: ApiKeyRecord } }).created;
          await store.revokeApiKey(apiKey.id, account.id);
          const again = await store.createApiKeyUnderKey(newKey().input, {
            ...claim,
            secret: new Uint8Array([9]),
          });
          expect(again).toEqual({ outcome: "replayed", created: { apiKey, secret: sealed } });
          expect(await store.listApiKeys(account.id)).toHaveLength(1);
          const reused = await appError(
            store.createApiKeyUnderKey(newKey().input, { ...claim, fingerprint: "other", secret: sealed }),
          );
          expect(reused.code).toBe("IDEMPOTENCY_KEY_REUSED");
        });

        it("creates exactly one key of many simultaneous creates under one key", async () => {
          const answers = await Promise.all(
            Array.from({ length: 8 }, () =>
              store.createApiKeyUnderKey(newKey().input, { ...claim, secret: sealed }),
            ),
          );
          expect(answers.filter((a) => a.outcome === "created")).toHaveLength(1);
          expect(answers.filter((a) => a.outcome === "replayed")).toHaveLength(7);
          expect(await store.listApiKeys(account.id)).toHaveLength(1);
        });
      });

      it("stores a key and finds it with its account by SHA-256", async () => {
        const { sha256, input } = newKey({ expiresAt: "2030-01-02T03:04:05.678Z" });
        const key = await store.createApiKey(input);
        expect(key).toEqual({
          id: expect.stringMatching(/^key_[0-9A-Z]{26}$/),
          accountId: account.id,
          name: "ci",
          prefix: "agentry_sk_abcdef",
          scopes: ["agents:read", "messages:send"],
          fullAccess: false,
          createdAt: expect.stringMatching(ISO_MS),
          lastUsedAt: null,
          expiresAt: "2030-01-02T03:04:05.678Z",
          revokedAt: null,
          createdBy: null,
        });
        expect(key).not.toHaveProperty("sha256");
        expect(await store.findApiKeyBySha256(sha256)).toEqual({ key, account });
        expect(await store.findApiKeyBySha256(randomHex())).toBeNull();
      });

      it("keeps a full-access key as one, holding every scope, however it is read", async () => {
        const { sha256, input } = newKey({ scopes: FULL_ACCESS });
        const key = await store.createApiKey(input);
        expect(key).toMatchObject({ scopes: [...SCOPES], fullAccess: true });
        expect((await store.findApiKeyBySha256(sha256))?.key).toEqual(key);
        expect(await store.listApiKeys(account.id)).toEqual([key]);
        expect(await store.revokeApiKey(key.id)).toMatchObject({ scopes: [...SCOPES], fullAccess: true });
      });

      it("keeps explicit scopes once each, in canonical order, even when they are every scope", async () => {
        const { sha256, input } = newKey({ scopes: ["history:read", "agents:read", "history:read"] });
        expect(await store.createApiKey(input)).toMatchObject({
          scopes: ["agents:read", "history:read"],
          fullAccess: false,
        });
        expect((await store.findApiKeyBySha256(sha256))?.key.scopes).toEqual(["agents:read", "history:read"]);
        // Naming every scope of today is not full access: a later version's scopes are not among them.
        const every = await store.createApiKey(newKey({ scopes: [...SCOPES] }).input);
        expect(every).toMatchObject({ scopes: [...SCOPES], fullAccess: false });
      });

      it("refuses a key for an unknown account", async () => {
        const { input } = newKey({ accountId: newId("account") });
        expect((await appError(store.createApiKey(input))).code).toBe("NOT_FOUND");
      });

      it("lists an account's keys oldest first, revoked ones included", async () => {
        const a = await store.createApiKey(newKey().input);
        const b = await store.createApiKey(newKey().input);
        const other = await newAccount();
        await store.createApiKey(newKey({ accountId: other.id }).input);
        const revoked = await store.revokeApiKey(a.id);
        expect(await store.listApiKeys(account.id)).toEqual([revoked, b]);
      });

      it("revokes once, keeping the first revocation time", async () => {
        const { sha256, input } = newKey();
        const key = await store.createApiKey(input);
        const first = await store.revokeApiKey(key.id);
        expect(first?.revokedAt).toMatch(ISO_MS);
        await tick();
        const second = await store.revokeApiKey(key.id, account.id);
        expect(second?.revokedAt).toBe(first?.revokedAt);
        expect((await store.findApiKeyBySha256(sha256))?.key.revokedAt).toBe(first?.revokedAt);
      });

      it("revokes only within the given account", async () => {
        const key = await store.createApiKey(newKey().input);
        const other = await newAccount();
        expect(await store.revokeApiKey(key.id, other.id)).toBeNull();
        expect((await store.listApiKeys(account.id))[0]?.revokedAt).toBeNull();
        expect(await store.revokeApiKey(newId("key"))).toBeNull();
      });

      it("finds revoked and expired keys too", async () => {
        const expired = newKey({ expiresAt: "2001-01-01T00:00:00.000Z" });
        await store.createApiKey(expired.input);
        const revoked = newKey();
        const key = await store.createApiKey(revoked.input);
        await store.revokeApiKey(key.id);
        expect((await store.findApiKeyBySha256(expired.sha256))?.key.expiresAt).toBe(
          "2001-01-01T00:00:00.000Z",
        );
        expect((await store.findApiKeyBySha256(revoked.sha256))?.key.revokedAt).toMatch(ISO_MS);
      });

      it("records last use, later times winning", async () => {
        const a = await store.createApiKey(newKey().input);
        const b = await store.createApiKey(newKey().input);
        await store.touchApiKeys(
          new Map([
            [a.id, "2026-01-01T10:00:00.000Z"],
            [b.id, "2026-01-01T11:00:00.000Z"],
            [newId("key"), "2026-01-01T11:00:00.000Z"],
          ]),
        );
        await store.touchApiKeys(
          new Map([
            [a.id, "2026-01-01T09:00:00.000Z"],
            [b.id, "2026-01-01T12:00:00.000Z"],
          ]),
        );
        await store.touchApiKeys(new Map());
        const keys = await store.listApiKeys(account.id);
        expect(keys.map((k) => k.lastUsedAt)).toEqual([
          "2026-01-01T10:00:00.000Z",
          "2026-01-01T12:00:00.000Z",
        ]);
      });
    });

    describe("console sign-in links and sessions", () => {
      let account: AccountRecord;
      const sha = (c: string) => c.repeat(64);
      const session = (c: string, overrides: { expiresAt?: string; idleTimeoutMs?: number } = {}) => ({
        sha256: sha(c),
        expiresAt: overrides.expiresAt ?? "2026-05-01T12:00:00.000Z",
        idleTimeoutMs: overrides.idleTimeoutMs ?? 30 * 60_000,
      });
      beforeEach(async () => {
        vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-05-01T00:00:00Z") });
        account = await newAccount();
        await store.createConsoleLink({
          accountId: account.id,
          sha256: sha("1"),
          expiresAt: "2026-05-01T00:10:00Z",
        });
      });
      afterEach(() => {
        vi.useRealTimers();
      });

      it("redeems a link once, into a session of the link's account", async () => {
        const redeemed = await store.redeemConsoleLink(sha("1"), session("a"));
        const [owner] = (await store.listMembers(account.id, { limit: 10, order: "asc" })).items;
        expect(redeemed).toEqual({
          account,
          member: owner,
          session: {
            id: expect.stringMatching(/^ses_[0-9A-Z]{26}$/),
            accountId: account.id,
            memberId: owner!.id,
            createdAt: "2026-05-01T00:00:00.000Z",
            expiresAt: "2026-05-01T12:00:00.000Z",
            idleTimeoutMs: 30 * 60_000,
            lastSeenAt: "2026-05-01T00:00:00.000Z",
            endedAt: null,
          },
        });
        expect(await store.redeemConsoleLink(sha("1"), session("b"))).toBeNull();
        expect(await store.useConsoleSession(sha("b"))).toBeNull();
      });

      it("refuses an unknown link and one past its expiry", async () => {
        expect(await store.redeemConsoleLink(sha("2"), session("a"))).toBeNull();
        vi.setSystemTime(new Date("2026-05-01T00:10:00Z"));
        expect(await store.redeemConsoleLink(sha("1"), session("a"))).toBeNull();
      });

      it("refuses a link for an unknown account", async () => {
        await expect(
          store.createConsoleLink({
            accountId: newId("account"),
            sha256: sha("3"),
            expiresAt: "2026-05-02T00:00:00Z",
          }),
        ).rejects.toMatchObject({ code: "NOT_FOUND" });
      });

      it("redeems a link exactly once among simultaneous redemptions", async () => {
        const results = await Promise.all(
          ["a", "b", "c", "d"].map((c) => store.redeemConsoleLink(sha("1"), session(c))),
        );
        expect(results.filter((result) => result !== null)).toHaveLength(1);
      });

      it("records each use of a usable session, and none once it is idle too long", async () => {
        const { session: started } = (await store.redeemConsoleLink(
          sha("1"),
          session("a", { idleTimeoutMs: 60_000 }),
        ))!;
        vi.setSystemTime(new Date("2026-05-01T00:00:59Z"));
        const used = await store.useConsoleSession(sha("a"));
        expect(used?.account).toEqual(account);
        expect(used?.session).toEqual({ ...started, lastSeenAt: "2026-05-01T00:00:59.000Z" });
        expect(sessionUsable(used!.session, Date.now())).toBe(true);
        vi.setSystemTime(new Date("2026-05-01T00:01:59Z"));
        const idle = await store.useConsoleSession(sha("a"));
        expect(idle?.session.lastSeenAt).toBe("2026-05-01T00:00:59.000Z");
        expect(sessionUsable(idle!.session, Date.now())).toBe(false);
      });

      it("ends a session at its absolute expiry, however active", async () => {
        await store.redeemConsoleLink(
          sha("1"),
          session("a", { expiresAt: "2026-05-01T00:02:00Z", idleTimeoutMs: 60_000 }),
        );
        for (const at of ["00:00:50", "00:01:40"]) {
          vi.setSystemTime(new Date(`2026-05-01T${at}Z`));
          expect(sessionUsable((await store.useConsoleSession(sha("a")))!.session, Date.now())).toBe(true);
        }
        vi.setSystemTime(new Date("2026-05-01T00:02:00Z"));
        expect(sessionUsable((await store.useConsoleSession(sha("a")))!.session, Date.now())).toBe(false);
      });

      it("removes expired links and sessions that expired or were signed out, and nothing else", async () => {
        await store.createConsoleLink({
          accountId: account.id,
          sha256: sha("2"),
          expiresAt: "2026-05-01T01:00:00Z",
        });
        await store.redeemConsoleLink(sha("1"), session("a", { expiresAt: "2026-05-01T00:30:00Z" }));
        await store.createConsoleLink({
          accountId: account.id,
          sha256: sha("3"),
          expiresAt: "2026-05-01T00:10:00Z",
        });
        await store.redeemConsoleLink(sha("3"), session("b", { expiresAt: "2026-05-01T12:00:00Z" }));
        await store.createConsoleLink({
          accountId: account.id,
          sha256: sha("4"),
          expiresAt: "2026-05-01T00:10:00Z",
        });
        await store.redeemConsoleLink(sha("4"), session("c", { expiresAt: "2026-05-01T12:00:00Z" }));
        await store.endConsoleSession(sha("c"));
        vi.setSystemTime(new Date("2026-05-01T00:45:00Z"));
        // Links 1, 3 and 4 have expired (used or not), session a has expired and c was signed out.
        expect(await store.deleteExpiredConsoleSessions(100)).toBe(5);
        expect(await store.deleteExpiredConsoleSessions(100)).toBe(0);
        expect(await store.useConsoleSession(sha("a"))).toBeNull();
        expect(await store.useConsoleSession(sha("c"))).toBeNull();
        expect((await store.useConsoleSession(sha("b")))?.session.endedAt).toBeNull();
        expect(await store.redeemConsoleLink(sha("2"), session("d"))).not.toBeNull();
      });

      it("signs a session out once, keeping the first time", async () => {
        await store.redeemConsoleLink(sha("1"), session("a"));
        expect(await store.endConsoleSession(sha("a"))).toBe(true);
        const ended = (await store.useConsoleSession(sha("a")))!.session;
        expect(ended.endedAt).toBe("2026-05-01T00:00:00.000Z");
        expect(sessionUsable(ended, Date.now())).toBe(false);
        vi.setSystemTime(new Date("2026-05-01T00:05:00Z"));
        expect(await store.endConsoleSession(sha("a"))).toBe(true);
        expect((await store.useConsoleSession(sha("a")))!.session.endedAt).toBe("2026-05-01T00:00:00.000Z");
        expect(await store.endConsoleSession(sha("f"))).toBe(false);
      });
    });

    describe("members", () => {
      let account: AccountRecord;
      beforeEach(async () => {
        account = await newAccount();
      });
      const page = async (limit = 100) =>
        (await store.listMembers(account.id, { limit, order: "asc" })).items;

      it("gives a new account one owner, with the email and name given or none", async () => {
        const [owner, ...others] = await page();
        expect(others).toEqual([]);
        expect(owner).toEqual({
          id: expect.stringMatching(/^usr_[0-9A-Z]{26}$/),
          accountId: account.id,
          email: null,
          name: "Owner",
          role: "owner",
          createdAt: account.createdAt,
        });
        const named = await store.createAccount({
          name: `named-${newId("request")}`,
          tier: "standard",
          limitOverrides: {},
          owner: { email: "Ada@Example.COM", name: "Ada" },
        });
        expect((await store.listMembers(named.id, { limit: 5, order: "asc" })).items).toMatchObject([
          { email: "ada@example.com", name: "Ada", role: "owner" },
        ]);
      });

      it("invites, reads, lists in pages, changes and removes members of its own account only", async () => {
        const dev = await store.createMember({
          accountId: account.id,
          email: " Dev@Example.com ",
          name: "Dev",
          role: "developer",
        });
        expect(dev).toEqual({
          id: expect.stringMatching(/^usr_/),
          accountId: account.id,
          email: "dev@example.com",
          name: "Dev",
          role: "developer",
          createdAt: expect.stringMatching(ISO_MS),
        });
        const viewer = await store.createMember({
          accountId: account.id,
          email: "v@example.com",
          name: "V",
          role: "viewer",
        });
        expect(await store.getMember(account.id, dev.id)).toEqual(dev);
        const other = await newAccount();
        expect(await store.getMember(other.id, dev.id)).toBeNull();
        const first = await store.listMembers(account.id, { limit: 2, order: "asc" });
        expect(first.hasMore).toBe(true);
        expect(first.items.map((m) => m.role)).toEqual(["owner", "developer"]);
        const rest = await store.listMembers(account.id, {
          limit: 2,
          after: first.items[1]!.id,
          order: "asc",
        });
        expect(rest).toEqual({ items: [viewer], hasMore: false });
        const newest = await store.listMembers(account.id, { limit: 2, order: "desc" });
        expect(newest.items.map((m) => m.role)).toEqual(["viewer", "developer"]);
        const older = await store.listMembers(account.id, {
          limit: 2,
          before: newest.items[1]!.id,
          order: "desc",
        });
        expect(older.items.map((m) => m.role)).toEqual(["owner"]);
        expect(older.hasMore).toBe(false);
        const above = await store.listMembers(account.id, {
          limit: 1,
          after: first.items[0]!.id,
          order: "desc",
        });
        expect(above).toEqual({ items: [dev], hasMore: true });

        expect(await store.updateMember(account.id, dev.id, { role: "admin", name: "Devi" })).toEqual({
          ...dev,
          role: "admin",
          name: "Devi",
        });
        expect(await store.updateMember(other.id, dev.id, { role: "viewer" })).toBeNull();
        expect(await store.deleteMember(other.id, dev.id)).toBe(false);
        expect(await store.deleteMember(account.id, dev.id)).toBe(true);
        expect(await store.getMember(account.id, dev.id)).toBeNull();
        expect(await store.deleteMember(account.id, dev.id)).toBe(false);
      });

      it("keeps emails unique within an account, not across accounts", async () => {
        await store.createMember({
          accountId: account.id,
          email: "a@example.com",
          name: "A",
          role: "viewer",
        });
        await expect(
          store.createMember({ accountId: account.id, email: "A@example.com", name: "A2", role: "admin" }),
        ).rejects.toMatchObject({ code: "MEMBER_EXISTS" });
        const b = await store.createMember({
          accountId: account.id,
          email: "b@example.com",
          name: "B",
          role: "viewer",
        });
        await expect(store.updateMember(account.id, b.id, { email: "a@example.com" })).rejects.toMatchObject({
          code: "MEMBER_EXISTS",
        });
        const other = await newAccount();
        await store.createMember({ accountId: other.id, email: "a@example.com", name: "A", role: "owner" });
        expect((await store.findMembersByEmail("A@EXAMPLE.com")).map((m) => m.accountId).sort()).toEqual(
          [account.id, other.id].sort(),
        );
        await expect(
          store.createMember({
            accountId: newId("account"),
            email: "x@example.com",
            name: "X",
            role: "viewer",
          }),
        ).rejects.toMatchObject({ code: "NOT_FOUND" });
      });

      it("never leaves an account without an owner, even under simultaneous changes", async () => {
        const [owner] = await page();
        await expect(store.deleteMember(account.id, owner!.id)).rejects.toMatchObject({ code: "LAST_OWNER" });
        await expect(store.updateMember(account.id, owner!.id, { role: "admin" })).rejects.toMatchObject({
          code: "LAST_OWNER",
        });
        const second = await store.createMember({
          accountId: account.id,
          email: "o2@example.com",
          name: "O2",
          role: "owner",
        });
        const results = await Promise.allSettled([
          store.updateMember(account.id, owner!.id, { role: "viewer" }),
          store.deleteMember(account.id, second.id),
        ]);
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        expect((await page()).filter((m) => m.role === "owner")).toHaveLength(1);
      });

      it("ends a removed member's sessions, and opens sessions for the member a link names", async () => {
        vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-05-01T00:00:00Z") });
        try {
          const dev = await store.createMember({
            accountId: account.id,
            email: "d@example.com",
            name: "D",
            role: "developer",
          });
          await store.createConsoleLink({
            accountId: account.id,
            sha256: "7".repeat(64),
            expiresAt: "2026-05-01T00:10:00Z",
            memberId: dev.id,
          });
          const newSession = {
            sha256: "8".repeat(64),
            expiresAt: "2026-05-01T12:00:00Z",
            idleTimeoutMs: 60_000,
          };
          const redeemed = await store.redeemConsoleLink("7".repeat(64), newSession);
          expect(redeemed?.member).toEqual(dev);
          expect(redeemed?.session.memberId).toBe(dev.id);
          const opened = await store.openConsoleSession(account.id, dev.id, {
            ...newSession,
            sha256: "9".repeat(64),
          });
          expect(opened?.member).toEqual(dev);
          expect(await store.openConsoleSession(account.id, newId("member"), newSession)).toBeNull();
          await store.updateMember(account.id, dev.id, { role: "viewer" });
          expect((await store.useConsoleSession("9".repeat(64)))?.member?.role).toBe("viewer");
          await store.deleteMember(account.id, dev.id);
          expect(await store.useConsoleSession("8".repeat(64))).toBeNull();
          expect(await store.useConsoleSession("9".repeat(64))).toBeNull();
          await expect(
            store.createConsoleLink({
              accountId: account.id,
              sha256: "6".repeat(64),
              expiresAt: "2026-05-01T00:10:00Z",
              memberId: dev.id,
            }),
          ).rejects.toMatchObject({ code: "MEMBER_NOT_FOUND" });
        } finally {
          vi.useRealTimers();
        }
      });

      it("records the member who created a key", async () => {
        const [owner] = await page();
        const key = await store.createApiKey({
          accountId: account.id,
          name: "by owner",
          scopes: ["agents:read"],
          expiresAt: null,
          sha256: randomHex(),
          prefix: "agentry_sk_abcdef",
          createdBy: owner!.id,
        });
        expect(key.createdBy).toBe(owner!.id);
        expect((await store.listApiKeys(account.id))[0]?.createdBy).toBe(owner!.id);
      });
    });

    describe("idempotency keys", () => {
      let account: AccountRecord;
      beforeEach(async () => {
        account = await newAccount();
      });
      afterEach(() => {
        vi.useRealTimers();
      });

      const claim = (overrides: Partial<IdempotencyClaim> = {}): IdempotencyClaim => ({
        accountId: account.id,
        keyHash: "a".repeat(64),
        fingerprint: "POST /v1/agents {}",
        leaseMs: 60_000,
        ...overrides,
      });
      const sealed = new Uint8Array([0, 1, 2, 250, 255]);

      it("starts the first request, holds the key while it runs, then replays its response", async () => {
        expect(await store.beginIdempotentRequest(claim())).toEqual({ outcome: "started" });
        expect(await store.beginIdempotentRequest(claim())).toEqual({ outcome: "in_use" });
        await store.completeIdempotentRequest(account.id, claim().keyHash, { status: 200, sealed });
        for (let i = 0; i < 2; i++) {
          expect(await store.beginIdempotentRequest(claim())).toEqual({
            outcome: "stored",
            response: { status: 200, sealed, resourceId: null },
          });
        }
      });

      it("refuses the key to a request with another fingerprint, running or finished", async () => {
        await store.beginIdempotentRequest(claim());
        expect(await store.beginIdempotentRequest(claim({ fingerprint: "other" }))).toEqual({
          outcome: "reused",
        });
        await store.completeIdempotentRequest(account.id, claim().keyHash, { status: 201, sealed });
        expect(await store.beginIdempotentRequest(claim({ fingerprint: "other" }))).toEqual({
          outcome: "reused",
        });
      });

      it("keeps each account's keys apart", async () => {
        const other = await newAccount();
        await store.beginIdempotentRequest(claim());
        expect(await store.beginIdempotentRequest(claim({ accountId: other.id, fingerprint: "x" }))).toEqual({
          outcome: "started",
        });
      });

      it("lets a released key run again, and never releases a stored response", async () => {
        await store.beginIdempotentRequest(claim());
        await store.releaseIdempotentRequest(account.id, claim().keyHash);
        expect(await store.beginIdempotentRequest(claim({ fingerprint: "after release" }))).toEqual({
          outcome: "started",
        });
        await store.completeIdempotentRequest(account.id, claim().keyHash, { status: 200, sealed });
        await store.releaseIdempotentRequest(account.id, claim().keyHash);
        expect(await store.beginIdempotentRequest(claim({ fingerprint: "after release" }))).toMatchObject({
          outcome: "stored",
        });
      });

      it("hands a key whose lease ran out to the next request, and keeps the first response stored", async () => {
        vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-03-01T00:00:00Z") });
        await store.beginIdempotentRequest(claim({ leaseMs: 1000 }));
        vi.setSystemTime(new Date("2026-03-01T00:00:00.999Z"));
        expect(await store.beginIdempotentRequest(claim())).toEqual({ outcome: "in_use" });
        vi.setSystemTime(new Date("2026-03-01T00:00:01.000Z"));
        expect(await store.beginIdempotentRequest(claim())).toEqual({ outcome: "started" });
        await store.completeIdempotentRequest(account.id, claim().keyHash, { status: 204, sealed });
        await store.completeIdempotentRequest(account.id, claim().keyHash, {
          status: 500,
          sealed: new Uint8Array([9]),
        });
        expect(await store.beginIdempotentRequest(claim())).toEqual({
          outcome: "stored",
          response: { status: 204, sealed, resourceId: null },
        });
      });

      it("forgets a key after 24 hours, and removes only expired records", async () => {
        vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-03-01T00:00:00Z") });
        await store.beginIdempotentRequest(claim());
        await store.completeIdempotentRequest(account.id, claim().keyHash, { status: 200, sealed });
        vi.setSystemTime(new Date("2026-03-01T12:00:00Z"));
        await store.beginIdempotentRequest(claim({ keyHash: "b".repeat(64) }));
        vi.setSystemTime(new Date("2026-03-01T23:59:59.999Z"));
        expect(await store.beginIdempotentRequest(claim({ fingerprint: "new" }))).toEqual({
          outcome: "reused",
        });
        vi.setSystemTime(new Date("2026-03-02T00:00:00Z"));
        expect(await store.deleteExpiredIdempotencyKeys(100)).toBe(1);
        expect(await store.deleteExpiredIdempotencyKeys(100)).toBe(0);
        expect(await store.beginIdempotentRequest(claim({ fingerprint: "new" }))).toEqual({
          outcome: "started",
        });
        // The other record, 12 hours old, stays: another request is still refused it.
        expect(
          await store.beginIdempotentRequest(claim({ keyHash: "b".repeat(64), fingerprint: "new" })),
        ).toEqual({ outcome: "reused" });
      });

      it("completes a create's key in the create's transaction, then takes the response", async () => {
        await store.beginIdempotentRequest(claim());
        const agent = await store.createAgent(account.id, agentFields(), {
          idempotencyKeyHash: claim().keyHash,
        });
        const stored = { outcome: "stored", response: { status: 201, sealed: null, resourceId: agent.id } };
        expect(await store.beginIdempotentRequest(claim())).toEqual(stored);
        await store.completeIdempotentRequest(account.id, claim().keyHash, { status: 201, sealed });
        expect(await store.beginIdempotentRequest(claim())).toEqual({
          outcome: "stored",
          response: { status: 201, sealed, resourceId: agent.id },
        });
      });

      it("leaves the key claimed, and no agent, when the create fails", async () => {
        const full = await newAccount("enterprise", { maxAgents: 0 });
        const mine = claim({ accountId: full.id });
        await store.beginIdempotentRequest(mine);
        const error = await appError(
          store.createAgent(full.id, agentFields(), { idempotencyKeyHash: mine.keyHash }),
        );
        expect(error.code).toBe("INSUFFICIENT_QUOTA");
        expect(await store.beginIdempotentRequest(mine)).toEqual({ outcome: "in_use" });
        await store.releaseIdempotentRequest(full.id, mine.keyHash);
        expect(await store.beginIdempotentRequest(mine)).toEqual({ outcome: "started" });
      });

      describe("a create that claims its key in its own transaction", () => {
        const underKey = (overrides: Partial<CreateUnderKey> = {}): CreateUnderKey => ({
          keyHash: claim().keyHash,
          fingerprint: claim().fingerprint,
          ...overrides,
        });
        const agentCount = async (accountId: string) =>
          (await store.listAgents(accountId, { page: 1, limit: 1, sortBy: "createdAt", order: "asc" })).total;

        it("creates once; the same request again answers the agent as it was created, and creates none", async () => {
          const first = await store.createAgentUnderKey(
            account.id,
            agentFields({ name: "Kept" }),
            underKey(),
          );
          expect(first.outcome).toBe("created");
          const created = (first as { created: AgentRecord }).created;
          await store.updateAgent(account.id, created.id, { name: "Renamed" });
          const again = await store.createAgentUnderKey(
            account.id,
            agentFields({ name: "Kept" }),
            underKey(),
          );
          expect(again).toEqual({ outcome: "replayed", created });
          expect(await agentCount(account.id)).toBe(1);
          // A claim through IdempotencyService finds the key finished, with the agent's id.
          expect(await store.beginIdempotentRequest(claim())).toEqual({
            outcome: "stored",
            response: { status: 201, sealed: null, resourceId: created.id },
          });
        });

        it("refuses the key of another request, and one claimed by a request still running", async () => {
          await store.createAgentUnderKey(account.id, agentFields(), underKey());
          const reused = await appError(
            store.createAgentUnderKey(account.id, agentFields(), underKey({ fingerprint: "other" })),
          );
          expect(reused.code).toBe("IDEMPOTENCY_KEY_REUSED");
          await store.beginIdempotentRequest(claim({ keyHash: "b".repeat(64) }));
          const inUse = await appError(
            store.createAgentUnderKey(account.id, agentFields(), underKey({ keyHash: "b".repeat(64) })),
          );
          expect(inUse.code).toBe("IDEMPOTENCY_KEY_IN_USE");
          expect(await agentCount(account.id)).toBe(1);
        });

        it("answers a refusal kept under the key again, without creating", async () => {
          await store.beginIdempotentRequest(claim());
          await store.completeIdempotentRequest(account.id, claim().keyHash, { status: 400, sealed });
          expect(await store.createAgentUnderKey(account.id, agentFields(), underKey())).toEqual({
            outcome: "stored",
            response: { status: 400, sealed, resourceId: null },
          });
          expect(await agentCount(account.id)).toBe(0);
        });

        it("takes over a claim whose lease ran out, and a record whose 24 hours are over", async () => {
          vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-03-01T00:00:00Z") });
          await store.beginIdempotentRequest(claim({ leaseMs: 1000 }));
          vi.setSystemTime(new Date("2026-03-01T00:00:01Z"));
          expect((await store.createAgentUnderKey(account.id, agentFields(), underKey())).outcome).toBe(
            "created",
          );
          vi.setSystemTime(new Date("2026-03-02T00:00:01Z"));
          const later = underKey({ fingerprint: "a new request" });
          expect((await store.createAgentUnderKey(account.id, agentFields(), later)).outcome).toBe("created");
          expect((await store.createAgentUnderKey(account.id, agentFields(), later)).outcome).toBe(
            "replayed",
          );
        });

        it("answers a create kept by the earlier two-step form with the agent as it is now", async () => {
          await store.beginIdempotentRequest(claim());
          const agent = await store.createAgent(account.id, agentFields(), {
            idempotencyKeyHash: claim().keyHash,
          });
          const renamed = await store.updateAgent(account.id, agent.id, { name: "Renamed" });
          expect(await store.createAgentUnderKey(account.id, agentFields(), underKey())).toEqual({
            outcome: "replayed",
            created: renamed,
          });
        });

        it("keeps neither the agent nor the key when the create fails", async () => {
          const full = await newAccount("enterprise", { maxAgents: 0 });
          const error = await appError(store.createAgentUnderKey(full.id, agentFields(), underKey()));
          expect(error.code).toBe("INSUFFICIENT_QUOTA");
          expect(await store.beginIdempotentRequest(claim({ accountId: full.id }))).toEqual({
            outcome: "started",
          });
        });

        it("creates exactly one agent of many simultaneous creates under one key", async () => {
          const answers = await Promise.all(
            Array.from({ length: 12 }, () =>
              store.createAgentUnderKey(account.id, agentFields(), underKey()),
            ),
          );
          const created = answers.filter((a) => a.outcome === "created");
          expect(created).toHaveLength(1);
          const agent = (created[0] as { created: AgentRecord }).created;
          expect(answers.filter((a) => a.outcome === "replayed")).toEqual(
            Array.from({ length: 11 }, () => ({ outcome: "replayed", created: agent })),
          );
          expect(await agentCount(account.id)).toBe(1);
        });
      });

      it("starts exactly one of many simultaneous claims on a key", async () => {
        const answers = await Promise.all(
          Array.from({ length: 12 }, () => store.beginIdempotentRequest(claim())),
        );
        expect(answers.filter((a) => a.outcome === "started")).toHaveLength(1);
        expect(answers.filter((a) => a.outcome === "in_use")).toHaveLength(11);
      });
    });

    it("is unusable after close, and closing twice is harmless", async () => {
      await store.close();
      await expect(store.getAccount(newId("account"))).rejects.toThrow();
      await store.close();
    });
  });
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function query(overrides: Partial<ListAgentsQuery> = {}): ListAgentsQuery {
  return { page: 1, limit: 100, sortBy: "createdAt", order: "desc", ...overrides };
}

function failure(): StatusReason {
  return {
    code: "MODEL_ERROR",
    message: "The provider rejected the credentials.",
    at: new Date().toISOString(),
  };
}

async function inError(store: RegistryStore, accountId: string): Promise<AgentRecord> {
  const agent = await store.createAgent(accountId, agentFields({ model: "m", modelProvider: "openai" }));
  const failed = await store.reportAgentHealth(accountId, agent.id, failure());
  if (failed?.status !== "error") throw new Error("the agent did not enter error");
  return failed;
}

/** Seven agents: three active, two inactive, two in error, created in an interleaved order. */
async function statusMix(store: RegistryStore, accountId: string): Promise<AgentRecord[]> {
  const plan = ["inactive", "active", "error", "active", "inactive", "error", "active"] as const;
  const out: AgentRecord[] = [];
  for (const status of plan) {
    const agent = await store.createAgent(accountId, agentFields());
    const changed =
      status === "active"
        ? agent
        : status === "inactive"
          ? await store.updateAgent(accountId, agent.id, { status })
          : await store.reportAgentHealth(accountId, agent.id, failure());
    out.push(changed!);
  }
  return out;
}

const CHANNELS: readonly OutboxChannel[] = ["conversation", "webhooks"];

/** Marks every event published on every channel. */
async function drainEvents(store: RegistryStore): Promise<OutboxEvent[]> {
  let events: OutboxEvent[] = [];
  for (const channel of CHANNELS) {
    events = await store.unpublishedEvents(channel, 1000);
    await store.markEventsPublished(
      channel,
      events.map((e) => e.seq),
    );
  }
  return events;
}

async function appError(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError, but the call succeeded");
}

function codePointCompare(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i]! - y[i]!;
  }
  return x.length - y.length;
}

function plainCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Ascending by key, ties by id: the order a list must return. */
function by(
  key: (agent: AgentRecord) => string,
  compare: (a: string, b: string) => number = plainCompare,
): (a: AgentRecord, b: AgentRecord) => number {
  return (a, b) => compare(key(a), key(b)) || plainCompare(a.id, b.id);
}

function isIncreasing(values: number[]): boolean {
  return values.every((v, i) => i === 0 || v > values[i - 1]!);
}

function randomHex(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join(
    "",
  );
}

function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 2));
}

export { agentFields };
