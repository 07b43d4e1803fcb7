import { randomBytes } from "node:crypto";
import { BUDGET_BOUNDS, newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewBudget } from "../store/budgets.js";
import type { AccountRecord, AgentFields, RegistryStore } from "../store/types.js";

/** The least agent there is. */
function agentFields(): AgentFields {
  return {
    name: "agent",
    bio: [],
    personality: {},
    knowledge: [],
    goals: [],
    clients: [],
    settings: {},
    modelProvider: null,
    model: null,
    plugins: [],
  };
}

/** The budgets part of the registry store contract; `open` as for `registryStoreContract`. */
export function budgetStoreContract(
  name: string,
  open: () => Promise<{ store: RegistryStore; cleanup(): Promise<void> }>,
): void {
  describe(`RegistryStore contract, budgets: ${name}`, () => {
    let store: RegistryStore;
    let cleanup: () => Promise<void>;
    let account: AccountRecord;

    beforeEach(async () => {
      ({ store, cleanup } = await open());
      account = await store.createAccount({
        name: `budgets-${newId("request")}`,
        tier: "standard",
        limitOverrides: {},
      });
    });
    afterEach(async () => {
      await cleanup();
    });

    const budget = (overrides: Partial<NewBudget> = {}): NewBudget => ({
      accountId: account.id,
      agentId: null,
      apiKeyId: null,
      unit: "tokens",
      period: "day",
      limit: 1000,
      ...overrides,
    });
    const key = () =>
      store.createApiKey({
        accountId: account.id,
        name: "k",
        scopes: ["messages:send"],
        expiresAt: null,
        sha256: randomBytes(32).toString("hex"),
        prefix: "agentry_sk_abcdef",
      });
    const failure = async (work: Promise<unknown>) => {
      const error = await work.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      return error as AppError;
    };

    it("creates, lists oldest first, updates and deletes budgets of the account, agent and key", async () => {
      const agent = await store.createAgent(account.id, agentFields());
      const apiKey = await key();
      const whole = await store.createBudget(budget({ unit: "usd", period: "month", limit: 5_000_000_000 }));
      expect(whole).toEqual({
        id: expect.stringMatching(/^bdg_[0-9A-Z]{26}$/),
        accountId: account.id,
        agentId: null,
        apiKeyId: null,
        unit: "usd",
        period: "month",
        limit: 5_000_000_000,
        createdAt: expect.any(String),
        updatedAt: whole.createdAt,
      });
      const ofAgent = await store.createBudget(budget({ agentId: agent.id }));
      const ofKey = await store.createBudget(budget({ apiKeyId: apiKey.id, limit: 7 }));
      expect(await store.listBudgets(account.id)).toEqual([whole, ofAgent, ofKey]);

      const updated = await store.updateBudget(account.id, ofKey.id, { limit: 9, period: "month" });
      expect(updated).toMatchObject({ id: ofKey.id, limit: 9, period: "month", apiKeyId: apiKey.id });
      expect(await store.updateBudget(account.id, ofKey.id, {})).toMatchObject({ limit: 9, period: "month" });
      expect(await store.deleteBudget(account.id, whole.id)).toBe(true);
      expect(await store.deleteBudget(account.id, whole.id)).toBe(false);
      expect((await store.listBudgets(account.id)).map((b) => b.id)).toEqual([ofAgent.id, ofKey.id]);
    });

    it("keeps accounts apart and refuses another account's agent or key", async () => {
      const other = await store.createAccount({
        name: `other-${newId("request")}`,
        tier: "standard",
        limitOverrides: {},
      });
      const theirAgent = await store.createAgent(other.id, agentFields());
      const mine = await store.createBudget(budget());
      expect(await store.listBudgets(other.id)).toEqual([]);
      expect(await store.updateBudget(other.id, mine.id, { limit: 1 })).toBeNull();
      expect(await store.deleteBudget(other.id, mine.id)).toBe(false);
      expect((await failure(store.createBudget(budget({ agentId: theirAgent.id })))).code).toBe(
        "AGENT_NOT_FOUND",
      );
      expect((await failure(store.createBudget(budget({ apiKeyId: newId("key") })))).code).toBe(
        "API_KEY_NOT_FOUND",
      );
    });

    it("drops an agent's budgets with the agent", async () => {
      const agent = await store.createAgent(account.id, agentFields());
      await store.createBudget(budget({ agentId: agent.id }));
      const kept = await store.createBudget(budget());
      expect(await store.deleteAgent(account.id, agent.id)).toBe(true);
      expect(await store.listBudgets(account.id)).toEqual([kept]);
    });

    it("never passes the account's maximum, even with simultaneous creates", async () => {
      const room = 5;
      for (let i = 0; i < BUDGET_BOUNDS.maxPerAccount - room; i++) await store.createBudget(budget());
      const outcomes = await Promise.allSettled(
        Array.from({ length: 12 }, () => store.createBudget(budget())),
      );
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(room);
      for (const o of outcomes.filter((o) => o.status === "rejected")) {
        expect((o as PromiseRejectedResult).reason).toMatchObject({ code: "INSUFFICIENT_QUOTA" });
      }
      expect(await store.listBudgets(account.id)).toHaveLength(BUDGET_BOUNDS.maxPerAccount);
    });
  });
}
