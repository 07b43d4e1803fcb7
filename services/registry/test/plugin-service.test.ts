import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SecretVault } from "../src/index.js";
import { type Harness, startRegistry, TEST_SECRETS_KEY } from "./harness.js";

const VALUE = "sk-live-0123456789-very-secret";
const text = (value: unknown) =>
  JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" ? String(v) : v));

let h: Harness;
let accountId: string;
let agentId: string;
beforeEach(async () => {
  h = await startRegistry();
  accountId = (await h.accounts.createAccount({ name: "acme" })).account!.id;
  agentId = (
    await h.agents.createAgent({
      accountId,
      spec: {
        name: "a",
        knowledge: ["Refunds take five days.", "We ship to Canada.", "Refund requests need a receipt."],
      },
    })
  ).agent!.id;
});
afterEach(() => h.close());

async function failure(call: Promise<unknown>): Promise<ConnectError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
}

describe("PluginService secrets", () => {
  it("stores a secret sealed, lists its name and time, and reveals it only on RevealSecrets", async () => {
    const put = await h.plugins.putSecret({ accountId, agentId, name: "API_TOKEN", value: VALUE });
    expect(put.secret?.name).toBe("API_TOKEN");
    expect(text(put)).not.toContain(VALUE);
    const sealed = await h.store.sealedAgentSecrets(accountId, agentId, ["API_TOKEN"]);
    expect(sealed?.API_TOKEN).toMatch(/^v1\./);
    expect(sealed?.API_TOKEN).not.toContain(VALUE);
    expect(sealed?.API_TOKEN).not.toContain(Buffer.from(VALUE).toString("base64"));

    const listed = await h.plugins.listSecrets({ accountId, agentId });
    expect(listed.secrets.map((secret) => secret.name)).toEqual(["API_TOKEN"]);
    expect(text(listed)).not.toContain(VALUE);

    const revealed = await h.plugins.revealSecrets({ accountId, agentId, names: ["API_TOKEN", "UNSET"] });
    expect(revealed.values).toEqual({ API_TOKEN: VALUE });
  });

  it("deletes a secret, and says which of secret or agent is missing", async () => {
    await h.plugins.putSecret({ accountId, agentId, name: "t", value: "v" });
    await h.plugins.deleteSecret({ accountId, agentId, name: "t" });
    const again = await failure(h.plugins.deleteSecret({ accountId, agentId, name: "t" }));
    expect(again.code).toBe(Code.NotFound);
    expect(again.rawMessage).toContain("has no secret named t");
    const gone = await failure(
      h.plugins.listSecrets({ accountId, agentId: "agt_01ARZ3NDEKTSV4RRFFQ69G5FAV" }),
    );
    expect(gone.code).toBe(Code.NotFound);
    expect(gone.rawMessage).toContain("does not exist");
  });

  it("treats another account's agent as missing", async () => {
    const other = (await h.accounts.createAccount({ name: "other" })).account!.id;
    await h.plugins.putSecret({ accountId, agentId, name: "t", value: VALUE });
    for (const call of [
      () => h.plugins.putSecret({ accountId: other, agentId, name: "t", value: "x" }),
      () => h.plugins.listSecrets({ accountId: other, agentId }),
      () => h.plugins.revealSecrets({ accountId: other, agentId, names: ["t"] }),
      () => h.plugins.deleteSecret({ accountId: other, agentId, name: "t" }),
      () => h.plugins.searchKnowledge({ accountId: other, agentId, query: "refund", limit: 5 }),
    ]) {
      const error = await failure(call());
      expect(error.code).toBe(Code.NotFound);
      expect(error.rawMessage).not.toContain(VALUE);
    }
  });

  it("refuses bad names and values without repeating the value", async () => {
    const long = "x".repeat(4097);
    const cases = [
      { name: "has space", value: "v", field: "name" },
      { name: "", value: "v", field: "name" },
      { name: "n".repeat(65), value: "v", field: "name" },
      { name: "ok", value: "", field: "value" },
      { name: "ok", value: long, field: "value" },
    ];
    for (const { name, value, field } of cases) {
      const error = await failure(h.plugins.putSecret({ accountId, agentId, name, value }));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(new RegExp(`^${field} `));
      expect(error.rawMessage).not.toContain(long);
    }
  });

  it("opens only with its own key and binding", async () => {
    await h.plugins.putSecret({ accountId, agentId, name: "t", value: VALUE });
    const sealed = (await h.store.sealedAgentSecrets(accountId, agentId, ["t"]))!.t!;
    const vault = new SecretVault(TEST_SECRETS_KEY);
    expect(vault.open(agentId, "t", sealed)).toBe(VALUE);
    expect(() => vault.open(agentId, "other", sealed)).toThrow(/does not open/);
    expect(() => vault.open("agt_other", "t", sealed)).toThrow(/does not open/);
    const wrongKey = new SecretVault(Buffer.alloc(32, 9).toString("base64"));
    expect(() => wrongKey.open(agentId, "t", sealed)).toThrow(
      /^the secret t does not open with this SECRETS_KEY$/,
    );
    expect(() => new SecretVault("c2hvcnQ=")).toThrow(/32 random bytes/);
  });
});

describe("PluginService knowledge search", () => {
  it("finds the agent's entries from the words of a query, best first", async () => {
    const { hits } = await h.plugins.searchKnowledge({ accountId, agentId, query: "Refund?", limit: 5 });
    expect(hits.map((hit) => [hit.index, hit.text])).toEqual([
      [0, "Refunds take five days."],
      [2, "Refund requests need a receipt."],
    ]);
    const quoted = await h.plugins.searchKnowledge({
      accountId,
      agentId,
      query: 'ship" OR * NEAR(',
      limit: 5,
    });
    expect(quoted.hits.map((hit) => hit.index)).toEqual([1]);
  });

  it("keeps in step with updates of the agent's knowledge", async () => {
    await h.agents.updateAgent({
      accountId,
      id: agentId,
      spec: { knowledge: ["Parcels go by train."] },
      updateMask: { paths: ["knowledge"] },
    });
    const { hits } = await h.plugins.searchKnowledge({ accountId, agentId, query: "refund", limit: 5 });
    expect(hits).toEqual([]);
    const train = await h.plugins.searchKnowledge({ accountId, agentId, query: "trains", limit: 5 });
    expect(train.hits.map((hit) => hit.text)).toEqual(["Parcels go by train."]);
  });

  it("refuses an empty query and a limit out of bounds", async () => {
    for (const [query, limit, field] of [
      ["  ", 5, "query"],
      ["x".repeat(1001), 5, "query"],
      ["refund", 0, "limit"],
      ["refund", 51, "limit"],
    ] as const) {
      const error = await failure(h.plugins.searchKnowledge({ accountId, agentId, query, limit }));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(new RegExp(`^${field} `));
    }
  });
});
