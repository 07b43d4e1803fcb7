import { fromConnectError } from "@agentry/errors";
import { presentAgent } from "@agentry/events";
import { currentRequestId } from "@agentry/logging";
import { AgentSortField, AgentSpecSchema, AgentStatus, AgentView, SortOrder, Tier } from "@agentry/proto";
import { create, fromJson, type JsonValue, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { FieldMaskSchema, timestampDate, timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RegistryStore } from "../src/store/types.js";
import { type Harness, startRegistry } from "./harness.js";

let h: Harness;
let accountId: string;

beforeEach(async () => {
  h = await startRegistry();
  accountId = await newAccount("acme");
});
afterEach(async () => {
  await h.close();
});

async function newAccount(name: string, maxAgents?: number): Promise<string> {
  const { account } = await h.accounts.createAccount(
    maxAgents === undefined ? { name } : { name, tier: Tier.ENTERPRISE, limitOverrides: { maxAgents } },
  );
  return account!.id;
}

const value = (json: JsonValue) => fromJson(ValueSchema, json);

function spec(overrides: Omit<MessageInitShape<typeof AgentSpecSchema>, "$typeName"> = {}) {
  return create(AgentSpecSchema, { name: "helper", ...overrides });
}

/** The error a call failed with, as the gateway sees it. */
async function failure(
  call: Promise<unknown>,
): Promise<{ rpc: ConnectError; app: ReturnType<typeof fromConnectError> }> {
  try {
    await call;
  } catch (error) {
    return { rpc: ConnectError.from(error), app: fromConnectError(error) };
  }
  throw new Error("expected the call to fail");
}

describe("CreateAgent under an Idempotency-Key", () => {
  const claim = { keyHash: "c".repeat(64), fingerprint: "POST /v1/agents digest" };

  it("creates once and answers the same request again with the agent as it was created", async () => {
    const first = await h.agents.createAgent({ accountId, spec: spec({ name: "Once" }), idempotency: claim });
    expect(first).toMatchObject({ replayed: false, keyClaimed: true });
    await h.agents.updateAgent({
      accountId,
      id: first.agent!.id,
      spec: spec({ name: "Renamed" }),
      updateMask: create(FieldMaskSchema, { paths: ["name"] }),
    });
    const again = await h.agents.createAgent({ accountId, spec: spec({ name: "Once" }), idempotency: claim });
    expect(again).toMatchObject({ replayed: true, keyClaimed: true });
    expect(again.agent).toEqual(first.agent);
    expect((await h.agents.listAgents({ accountId, page: 1, pageSize: 10 })).totalSize).toBe(1);
  });

  it("refuses another request's key with FAILED_PRECONDITION IDEMPOTENCY_KEY_REUSED, and a malformed claim", async () => {
    await h.agents.createAgent({ accountId, spec: spec(), idempotency: claim });
    const reused = await failure(
      h.agents.createAgent({ accountId, spec: spec(), idempotency: { ...claim, fingerprint: "other" } }),
    );
    expect(reused.rpc.code).toBe(Code.FailedPrecondition);
    expect(reused.app.code).toBe("IDEMPOTENCY_KEY_REUSED");
    for (const bad of [
      { ...claim, keyHash: "C".repeat(64) },
      { ...claim, fingerprint: "" },
    ]) {
      const refused = await failure(h.agents.createAgent({ accountId, spec: spec(), idempotency: bad }));
      expect(refused.rpc.code).toBe(Code.InvalidArgument);
    }
  });
});

describe("CreateAgent and GetAgent", () => {
  it("stores every field of the spec and reads it back", async () => {
    const { agent } = await h.agents.createAgent({
      accountId,
      spec: spec({
        name: "Ada",
        bio: ["Mathematician"],
        personality: { tone: "precise", traits: ["curious", { depth: 3 }] },
        knowledge: ["engines"],
        goals: ["compute"],
        clients: value(["discord", { type: "telegram", token: null }]),
        settings: { voice: { speed: 1.5 } },
        modelProvider: "anthropic",
        model: "claude",
        plugins: value([{ name: "calc", enabled: true }]),
      }),
    });
    expect(agent?.id).toMatch(/^agt_/);
    expect(agent?.accountId).toBe(accountId);
    expect(agent?.status).toBe(AgentStatus.ACTIVE);
    expect(agent?.statusReason).toBeUndefined();
    expect(agent?.createTime).toEqual(agent?.updateTime);

    const { agent: read } = await h.agents.getAgent({ accountId, id: agent!.id });
    expect(read).toEqual(agent);
    const s = read!.spec!;
    expect(s.name).toBe("Ada");
    expect(s.personality).toEqual({ tone: "precise", traits: ["curious", { depth: 3 }] });
    expect(s.settings).toEqual({ voice: { speed: 1.5 } });
    expect(toJson(ValueSchema, s.clients!)).toEqual(["discord", { type: "telegram", token: null }]);
    expect(toJson(ValueSchema, s.plugins!)).toEqual([{ name: "calc", enabled: true }]);
    expect([s.modelProvider, s.model]).toEqual(["anthropic", "claude"]);
    expect(await h.store.getAgent(accountId, agent!.id)).toMatchObject({
      clients: ["discord", { type: "telegram", token: null }],
      modelProvider: "anthropic",
    });
  });

  it("fills omitted fields with empty values and leaves the model fields unset", async () => {
    const { agent } = await h.agents.createAgent({ accountId, spec: { name: "bare" } });
    const s = agent!.spec!;
    expect([s.bio, s.knowledge, s.goals, s.personality, s.settings]).toEqual([[], [], [], {}, {}]);
    expect(toJson(ValueSchema, s.clients!)).toEqual([]);
    expect(toJson(ValueSchema, s.plugins!)).toEqual([]);
    expect(s.modelProvider).toBeUndefined();
    expect(s.model).toBeUndefined();
  });

  it("refuses a missing spec, a blank name and clients that are not an array", async () => {
    for (const request of [
      { accountId },
      { accountId, spec: spec({ name: "   " }) },
      { accountId, spec: spec({ name: "x".repeat(201) }) },
      { accountId, spec: spec({ clients: value({ type: "discord" }) }) },
    ]) {
      const { rpc, app } = await failure(h.agents.createAgent(request));
      expect(rpc.code).toBe(Code.InvalidArgument);
      expect(app.code).toBe("INVALID_REQUEST");
    }
    expect(
      (await h.store.listAgents(accountId, { page: 1, limit: 10, sortBy: "name", order: "asc" })).total,
    ).toBe(0);
  });

  it("counts a name's characters as code points, as the gateway does", async () => {
    const { agent } = await h.agents.createAgent({
      accountId,
      spec: spec({ name: "\u{1F600}".repeat(200) }),
    });
    expect(agent!.spec!.name).toBe("\u{1F600}".repeat(200));
    const { app } = await failure(
      h.agents.createAgent({ accountId, spec: spec({ name: "\u{1F600}".repeat(201) }) }),
    );
    expect(app.code).toBe("INVALID_REQUEST");
  });

  it("refuses an unknown account as unauthenticated", async () => {
    const { rpc, app } = await failure(h.agents.createAgent({ accountId: "acct_nobody", spec: spec() }));
    expect(rpc.code).toBe(Code.Unauthenticated);
    expect(app.code).toBe("UNAUTHORIZED");
  });

  it("answers NOT_FOUND with the agent's id for a missing agent", async () => {
    const { rpc, app } = await failure(h.agents.getAgent({ accountId, id: "agt_missing" }));
    expect(rpc.code).toBe(Code.NotFound);
    expect(app.code).toBe("AGENT_NOT_FOUND");
    expect(app.message).toBe("Agent agt_missing does not exist.");
  });
});

describe("agents as JSON text (AgentView)", () => {
  const fields = {
    personality: { tone: "precise", "2": ["b"], "1": { nested: null } },
    clients: ["discord", { type: "telegram", respondIn: "all" }],
    settings: { temperature: 0.5, secrets: { OPENAI_API_KEY: "sk-kept" } },
    plugins: [{ name: "calc", enabled: true }],
  };

  /** A create as a gateway of an earlier release sends it: the Struct and Value forms only. */
  async function createdOldShape() {
    const { agent } = await h.agents.createAgent({
      accountId,
      spec: spec({
        name: "Ada",
        bio: ["Mathematician"],
        personality: fields.personality,
        clients: value(fields.clients),
        settings: fields.settings,
        plugins: value(fields.plugins),
        modelProvider: "openai",
      }),
    });
    return agent!;
  }

  it("answers each view in its own form, the unspecified one exactly as before", async () => {
    const created = await createdOldShape();
    const old = (await h.agents.getAgent({ accountId, id: created.id })).agent!;
    expect(old).toEqual(created);
    expect(old.spec?.personalityJson).toBe("");
    expect(old.publicJson).toBe("");

    const json = (await h.agents.getAgent({ accountId, id: created.id, view: AgentView.JSON })).agent!;
    const s = json.spec!;
    expect([s.personality, s.clients, s.settings, s.plugins]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(JSON.parse(s.personalityJson)).toEqual(fields.personality);
    expect(JSON.parse(s.clientsJson)).toEqual(fields.clients);
    expect(JSON.parse(s.settingsJson)).toEqual(fields.settings);
    expect(JSON.parse(s.pluginsJson)).toEqual(fields.plugins);
    expect([s.name, s.bio, s.modelProvider, s.model]).toEqual([
      "Ada",
      ["Mathematician"],
      "openai",
      undefined,
    ]);
    expect([json.updateTime, json.createTime, json.status]).toEqual([
      old.updateTime,
      old.createTime,
      old.status,
    ]);

    const pub = (await h.agents.getAgent({ accountId, id: created.id, view: AgentView.PUBLIC })).agent!;
    expect(pub.spec).toBeUndefined();
    expect(pub.updateTime).toEqual(old.updateTime);
    const record = await h.store.getAgent(accountId, created.id);
    const { apiEndpoint: _, ...expected } = presentAgent(record!, "");
    expect(pub.publicJson).toBe(JSON.stringify(expected));
    expect(pub.publicJson).not.toContain("sk-kept");
  });

  it("answers a page in the view asked for", async () => {
    const created = await createdOldShape();
    const page = await h.agents.listAgents({ accountId, view: AgentView.PUBLIC });
    expect(page.agents.map((agent) => [agent.id, agent.spec, JSON.parse(agent.publicJson).name])).toEqual([
      [created.id, undefined, "Ada"],
    ]);
    const old = await h.agents.listAgents({ accountId });
    expect(old.agents).toEqual([created]);
  });

  it("reads a spec's JSON text in preference to its Struct and Value forms, on create and update", async () => {
    const { agent } = await h.agents.createAgent({
      accountId,
      spec: spec({
        personality: { from: "struct" },
        personalityJson: JSON.stringify({ from: "text" }),
        clientsJson: JSON.stringify(["slack"]),
        settingsJson: JSON.stringify({ memory: false }),
        pluginsJson: "[]",
        plugins: value([{ name: "ignored" }]),
      }),
    });
    expect(await h.store.getAgent(accountId, agent!.id)).toMatchObject({
      personality: { from: "text" },
      clients: ["slack"],
      settings: { memory: false },
      plugins: [],
    });
    await h.agents.updateAgent({
      accountId,
      id: agent!.id,
      spec: spec({ settingsJson: JSON.stringify({ memory: true }), pluginsJson: '["search"]' }),
      updateMask: create(FieldMaskSchema, { paths: ["settings", "plugins"] }),
    });
    expect(await h.store.getAgent(accountId, agent!.id)).toMatchObject({
      personality: { from: "text" },
      settings: { memory: true },
      plugins: ["search"],
    });
  });

  it("refuses JSON text that is not JSON, or not of its field's shape, naming the field", async () => {
    for (const [bad, field] of [
      [{ personalityJson: "{" }, "personality_json"],
      [{ personalityJson: "[]" }, "personality_json"],
      [{ clientsJson: "{}" }, "clients_json"],
      [{ settingsJson: "null" }, "settings_json"],
      [{ pluginsJson: '"calc"' }, "plugins_json"],
    ] as const) {
      const refused = await failure(h.agents.createAgent({ accountId, spec: spec(bad) }));
      expect(refused.rpc.code).toBe(Code.InvalidArgument);
      expect(refused.rpc.rawMessage).toContain(field);
    }
  });

  it("answers every new version's text, whoever wrote it", async () => {
    const created = await createdOldShape();
    const read = async () =>
      JSON.parse(
        (await h.agents.getAgent({ accountId, id: created.id, view: AgentView.PUBLIC })).agent!.publicJson,
      );
    expect((await read()).name).toBe("Ada");
    // Written to the store directly, as another registry process sharing it would: the handlers are not told.
    await h.store.updateAgent(accountId, created.id, { name: "Grace", settings: { temperature: 1 } });
    expect(await read()).toMatchObject({ name: "Grace", settings: { temperature: 1 } });
    const json = (await h.agents.getAgent({ accountId, id: created.id, view: AgentView.JSON })).agent!;
    expect(JSON.parse(json.spec!.settingsJson)).toMatchObject({ temperature: 1 });
    await h.agents.reportAgentHealth({
      accountId,
      id: created.id,
      failure: { code: "MODEL_ERROR", message: "no" },
    });
    expect(await read()).toMatchObject({
      status: "error",
      statusReason: { code: "MODEL_ERROR", message: "no" },
    });
  });
});

describe("quota", () => {
  it("fails the create past maxAgents with a code that survives the trip as INSUFFICIENT_QUOTA", async () => {
    const small = await newAccount("small", 2);
    await h.agents.createAgent({ accountId: small, spec: spec() });
    await h.agents.createAgent({ accountId: small, spec: spec() });
    const { rpc, app } = await failure(h.agents.createAgent({ accountId: small, spec: spec() }));
    expect(rpc.code).toBe(Code.FailedPrecondition);
    expect(app.code).toBe("INSUFFICIENT_QUOTA");
    expect(app.message).toContain("maxAgents");
    expect(app.message).toContain("2");
  });
});

describe("another account's agent", () => {
  it("is NOT_FOUND for every operation, and stays untouched", async () => {
    const { agent } = await h.agents.createAgent({ accountId, spec: spec({ name: "mine" }) });
    const intruder = await newAccount("intruder");
    const id = agent!.id;
    const calls = [
      h.agents.getAgent({ accountId: intruder, id }),
      h.agents.updateAgent({
        accountId: intruder,
        id,
        spec: spec({ name: "taken" }),
        updateMask: { paths: ["name"] },
      }),
      h.agents.deleteAgent({ accountId: intruder, id }),
      h.agents.reportAgentHealth({ accountId: intruder, id, failure: { code: "MODEL_ERROR", message: "x" } }),
    ];
    for (const call of calls) {
      const { app } = await failure(call);
      expect(app.code).toBe("AGENT_NOT_FOUND");
    }
    const list = await h.agents.listAgents({ accountId: intruder });
    expect(list.agents).toEqual([]);
    expect((await h.agents.getAgent({ accountId, id })).agent).toEqual(agent);
  });
});

describe("ListAgents", () => {
  it("defaults to page 1 of 20, newest first, and reports the total", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 22; i++)
      ids.push((await h.agents.createAgent({ accountId, spec: spec() })).agent!.id);
    const first = await h.agents.listAgents({ accountId });
    expect(first.totalSize).toBe(22);
    expect(first.agents.map((a) => a.id)).toEqual(ids.slice().reverse().slice(0, 20));
    const second = await h.agents.listAgents({ accountId, page: 2 });
    expect(second.agents.map((a) => a.id)).toEqual(ids.slice(0, 2).reverse());
  });

  it("filters by status and sorts by name", async () => {
    for (const name of ["b", "a", "c"]) await h.agents.createAgent({ accountId, spec: spec({ name }) });
    const { agent } = await h.agents.createAgent({ accountId, spec: spec({ name: "z" }) });
    await h.agents.updateAgent({ accountId, id: agent!.id, status: AgentStatus.INACTIVE });

    const active = await h.agents.listAgents({
      accountId,
      status: AgentStatus.ACTIVE,
      sortBy: AgentSortField.NAME,
      order: SortOrder.ASC,
    });
    expect(active.agents.map((a) => a.spec?.name)).toEqual(["a", "b", "c"]);
    expect(active.totalSize).toBe(3);
    const inactive = await h.agents.listAgents({ accountId, status: AgentStatus.INACTIVE });
    expect(inactive.agents.map((a) => a.id)).toEqual([agent!.id]);
  });

  it("refuses page sizes and pages out of range", async () => {
    for (const request of [
      { accountId, pageSize: 101 },
      { accountId, pageSize: -1 },
      { accountId, page: -3 },
    ]) {
      const { app } = await failure(h.agents.listAgents(request));
      expect(app.code).toBe("INVALID_REQUEST");
    }
  });
});

describe("UpdateAgent", () => {
  it("changes only the fields named in the mask", async () => {
    const { agent } = await h.agents.createAgent({
      accountId,
      spec: spec({ name: "before", bio: ["kept"], model: "m1", modelProvider: "openai" }),
    });
    const { agent: updated } = await h.agents.updateAgent({
      accountId,
      id: agent!.id,
      // Values outside the mask are ignored, even though they differ.
      spec: spec({ name: "after", bio: ["ignored"], goals: ["new"], model: "ignored" }),
      updateMask: create(FieldMaskSchema, { paths: ["name", "goals"] }),
    });
    expect(updated?.spec).toMatchObject({ name: "after", bio: ["kept"], goals: ["new"], model: "m1" });
    expect(timestampDate(updated!.updateTime!).getTime()).toBeGreaterThanOrEqual(
      timestampDate(agent!.updateTime!).getTime(),
    );
  });

  it("resets model_provider and model when named in the mask and left unset", async () => {
    const { agent } = await h.agents.createAgent({
      accountId,
      spec: spec({ model: "m1", modelProvider: "openai" }),
    });
    const { agent: updated } = await h.agents.updateAgent({
      accountId,
      id: agent!.id,
      spec: {},
      updateMask: { paths: ["model_provider", "model"] },
    });
    expect(updated?.spec?.modelProvider).toBeUndefined();
    expect(updated?.spec?.model).toBeUndefined();
    expect(await h.store.getAgent(accountId, agent!.id)).toMatchObject({ modelProvider: null, model: null });
  });

  it("replaces clients and plugins, and empties them when named and unset", async () => {
    const { agent } = await h.agents.createAgent({ accountId, spec: spec({ plugins: value(["a"]) }) });
    const { agent: updated } = await h.agents.updateAgent({
      accountId,
      id: agent!.id,
      spec: { clients: value(["discord"]) },
      updateMask: { paths: ["clients", "plugins"] },
    });
    expect(toJson(ValueSchema, updated!.spec!.clients!)).toEqual(["discord"]);
    expect(toJson(ValueSchema, updated!.spec!.plugins!)).toEqual([]);
  });

  it("sets the status, and refuses ERROR", async () => {
    const { agent } = await h.agents.createAgent({ accountId, spec: spec() });
    const { agent: paused } = await h.agents.updateAgent({
      accountId,
      id: agent!.id,
      status: AgentStatus.INACTIVE,
    });
    expect(paused?.status).toBe(AgentStatus.INACTIVE);

    for (const status of [AgentStatus.ERROR, AgentStatus.UNSPECIFIED]) {
      const { rpc, app } = await failure(h.agents.updateAgent({ accountId, id: agent!.id, status }));
      expect(rpc.code).toBe(Code.InvalidArgument);
      expect(app.code).toBe("INVALID_REQUEST");
    }
    expect((await h.agents.getAgent({ accountId, id: agent!.id })).agent?.status).toBe(AgentStatus.INACTIVE);
  });

  it("refuses a mask path that is not a field of AgentSpec", async () => {
    const { agent } = await h.agents.createAgent({ accountId, spec: spec() });
    for (const path of ["status", "modelProvider", "spec.name", "id"]) {
      const { app } = await failure(
        h.agents.updateAgent({ accountId, id: agent!.id, spec: spec(), updateMask: { paths: [path] } }),
      );
      expect(app.code).toBe("INVALID_REQUEST");
      expect(app.details).toEqual([{ field: "update_mask", issue: expect.stringContaining(path) }]);
    }
  });

  it("refuses a blank name named in the mask", async () => {
    const { agent } = await h.agents.createAgent({ accountId, spec: spec() });
    const { app } = await failure(
      h.agents.updateAgent({ accountId, id: agent!.id, spec: {}, updateMask: { paths: ["name"] } }),
    );
    expect(app.code).toBe("INVALID_REQUEST");
  });

  it("takes an agent out of ERROR when its settings change", async () => {
    const { agent } = await h.agents.createAgent({ accountId, spec: spec() });
    await h.agents.reportAgentHealth({
      accountId,
      id: agent!.id,
      failure: { code: "MODEL_ERROR", message: "bad key" },
    });
    const { agent: fixed } = await h.agents.updateAgent({
      accountId,
      id: agent!.id,
      spec: { settings: { key: "new" } },
      updateMask: { paths: ["settings"] },
    });
    expect(fixed?.status).toBe(AgentStatus.ACTIVE);
    expect(fixed?.statusReason).toBeUndefined();
  });

  it("answers NOT_FOUND for a missing agent", async () => {
    const { app } = await failure(
      h.agents.updateAgent({ accountId, id: "agt_missing", status: AgentStatus.ACTIVE }),
    );
    expect(app.code).toBe("AGENT_NOT_FOUND");
    expect(app.message).toBe("Agent agt_missing does not exist.");
  });
});

describe("DeleteAgent", () => {
  it("removes the agent and records the deletion for other services", async () => {
    const { agent } = await h.agents.createAgent({ accountId, spec: spec() });
    expect(await h.agents.deleteAgent({ accountId, id: agent!.id })).toBeDefined();
    expect((await failure(h.agents.getAgent({ accountId, id: agent!.id }))).app.code).toBe("AGENT_NOT_FOUND");
    expect((await failure(h.agents.deleteAgent({ accountId, id: agent!.id }))).app.code).toBe(
      "AGENT_NOT_FOUND",
    );
    const events = await h.store.unpublishedEvents("conversation", 100);
    expect(events.at(-1)).toMatchObject({
      type: "agent.deleted",
      payload: { accountId, agentId: agent!.id },
    });
  });
});

describe("ReportAgentHealth", () => {
  it("puts the agent in ERROR with the reason, and a success takes it out", async () => {
    const { agent } = await h.agents.createAgent({ accountId, spec: spec() });
    const at = new Date("2026-03-04T05:06:07.089Z");
    const { agent: failed } = await h.agents.reportAgentHealth({
      accountId,
      id: agent!.id,
      failure: {
        code: "MODEL_ERROR",
        message: "The provider rejected the key.",
        time: timestampFromDate(at),
      },
    });
    expect(failed?.status).toBe(AgentStatus.ERROR);
    expect(failed?.statusReason).toMatchObject({
      code: "MODEL_ERROR",
      message: "The provider rejected the key.",
    });
    expect(timestampDate(failed!.statusReason!.time!)).toEqual(at);

    const { agent: recovered } = await h.agents.reportAgentHealth({ accountId, id: agent!.id });
    expect(recovered?.status).toBe(AgentStatus.ACTIVE);
    expect(recovered?.statusReason).toBeUndefined();
  });

  it("leaves an INACTIVE agent inactive", async () => {
    const { agent } = await h.agents.createAgent({ accountId, spec: spec() });
    await h.agents.updateAgent({ accountId, id: agent!.id, status: AgentStatus.INACTIVE });
    const { agent: reported } = await h.agents.reportAgentHealth({
      accountId,
      id: agent!.id,
      failure: { code: "MODEL_ERROR", message: "x" },
    });
    expect(reported?.status).toBe(AgentStatus.INACTIVE);
  });
});

describe("requests", () => {
  it("serve each call inside the request scope of the id its caller sent", async () => {
    const seen: (string | undefined)[] = [];
    const spied = await startRegistry(
      (store): RegistryStore => ({
        ...store,
        getAgent: (...args) => {
          seen.push(currentRequestId());
          return store.getAgent(...args);
        },
      }),
    );
    try {
      const id = (await spied.accounts.createAccount({ name: "x" })).account!.id;
      await failure(
        spied.agents.getAgent({ accountId: id, id: "agt_x" }, { headers: { "x-request-id": "req_abc" } }),
      );
      await failure(spied.agents.getAgent({ accountId: id, id: "agt_x" }));
      expect(seen[0]).toBe("req_abc");
      expect(seen[1]).toMatch(/^req_/);
      expect(seen[1]).not.toBe("req_abc");
    } finally {
      await spied.close();
    }
  });

  it("answer an unexpected failure as INTERNAL without its details, and log it", async () => {
    const broken = await startRegistry(
      (store): RegistryStore => ({
        ...store,
        getAgent: async () => {
          throw new Error("SQLITE_CORRUPT: database disk image is malformed at /secret/path");
        },
      }),
    );
    const logged = vi.spyOn(broken.logger, "error");
    try {
      const { rpc, app } = await failure(broken.agents.getAgent({ accountId: "acct_x", id: "agt_x" }));
      expect(rpc.code).toBe(Code.Internal);
      expect(rpc.rawMessage).not.toContain("secret");
      expect(app.code).toBe("INTERNAL_ERROR");
      expect(logged).toHaveBeenCalledTimes(1);
      const [fields] = logged.mock.calls[0] as unknown as [{ err: Error; rpc: string }];
      expect(fields.err.message).toContain("SQLITE_CORRUPT");
      expect(fields.rpc).toBe("agentry.registry.v1.AgentService/GetAgent");
    } finally {
      await broken.close();
    }
  });
});
