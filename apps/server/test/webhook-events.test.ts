import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { Receiver, verify } from "@agentry/webhooks/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Harness, PUBLIC_BASE_URL, startHarness, type Tenant } from "./harness.js";
import { parseEventStream } from "./sse.js";

/*
 * Events through the whole all-in-one server: the registry writes agent events to its outbox with each change,
 * the conversation service message events with each send, their relays publish them to the embedded webhooks
 * service, whose worker POSTs them to a receiver that verifies every one with the `standardwebhooks` package.
 */

let openai: FakeProviderServer<OpenAIChatBody>;
let receiver: Receiver;
let h: Harness;
let paths = 0;

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  receiver = await Receiver.start();
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
    ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_RETRY_SCHEDULE: "300ms,900ms",
  });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
  await openai.close();
});
beforeEach(() => openai.reset());

interface Event {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

async function subscribe(tenant: Tenant, events: string[]) {
  const path = `events-${++paths}`;
  const res = await h.request<{ data: { secret: string } }>("POST", "/v1/webhooks", {
    key: tenant.key,
    body: { url: receiver.url(path), events },
  });
  expect(res.status).toBe(201);
  const secret = res.body.data.secret;
  return {
    /** Every event the path received, verified; throws on a bad signature. */
    events: () => receiver.at(path).map((received) => verify(received, secret) as Event),
    /** The raw bodies, as they arrived. */
    bodies: () => receiver.at(path).map((received) => received.body),
  };
}

const api = <T = Record<string, unknown>>(tenant: Tenant, method: string, path: string, body?: unknown) =>
  h.request<{ data: T }>(method, path, { key: tenant.key, ...(body !== undefined ? { body } : {}) });

describe("agent events", () => {
  it("reach a subscribed endpoint once each, signed, with the agent as the API shows it and no secrets", async () => {
    const tenant = await h.tenant();
    const all = await subscribe(tenant, ["*"]);
    const created = await api<{ id: string; settings: Record<string, unknown> }>(
      tenant,
      "POST",
      "/v1/agents",
      {
        name: "Ada",
        settings: { temperature: 0.5, secrets: { OPENAI_API_KEY: "sk-agent-secret" } },
      },
    );
    const id = created.body.data.id;
    const renamed = await api(tenant, "PATCH", `/v1/agents/${id}`, { name: "Ada L." });
    await api(tenant, "PATCH", `/v1/agents/${id}`, { status: "inactive" });
    await api(tenant, "PATCH", `/v1/agents/${id}`, { status: "active" });
    await api(tenant, "DELETE", `/v1/agents/${id}`);

    await expect.poll(() => all.events().length, { timeout: 15_000 }).toBe(7);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = all.events();
    expect(events.map((e) => e.type)).toEqual([
      "agent.created",
      "agent.updated",
      "agent.updated",
      "agent.status_changed",
      "agent.updated",
      "agent.status_changed",
      "agent.deleted",
    ]);
    expect(new Set(events.map((e) => e.id)).size).toBe(7);
    for (const event of events) expect(event.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);

    // The agent as GET answers it, without settings.secrets.
    const { secrets: _secrets, ...settings } = created.body.data.settings;
    expect(events[0]!.data).toEqual({ ...created.body.data, settings });
    expect(events[0]!.data.apiEndpoint).toBe(`${PUBLIC_BASE_URL}/v1/agents/${id}/messages`);
    expect(events[1]!.data).toEqual({ ...renamed.body.data, settings });
    expect(events[3]!.data).toMatchObject({ id, status: "inactive" });
    expect(events[5]!.data).toMatchObject({ id, status: "active" });
    expect(events[6]!.data).toEqual({ id });
    expect(JSON.stringify(events)).not.toContain("sk-agent-secret");
    expect(receiver.at(`events-${paths}`).map((r) => r.headers["webhook-id"])).toEqual(
      events.map((e) => e.id),
    );
  });

  it("a failing provider's error is agent.status_changed alone, and so is the recovery", async () => {
    const tenant = await h.tenant();
    const created = await api<{ id: string }>(tenant, "POST", "/v1/agents", { name: "Bea" });
    const id = created.body.data.id;
    const changes = await subscribe(tenant, ["agent.updated", "agent.status_changed"]);

    openai.failWith(401);
    expect((await api(tenant, "POST", `/v1/agents/${id}/messages`, { text: "Hi" })).status).toBe(502);
    openai.failWith(401);
    expect((await api(tenant, "POST", `/v1/agents/${id}/messages`, { text: "Hi" })).status).toBe(502);
    openai.reset();
    expect((await api(tenant, "POST", `/v1/agents/${id}/messages`, { text: "Hi" })).status).toBe(200);

    await expect.poll(() => changes.events().length, { timeout: 15_000 }).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = changes.events();
    expect(events.map((e) => [e.type, e.data.status])).toEqual([
      ["agent.status_changed", "error"],
      ["agent.status_changed", "active"],
    ]);
    expect(events[0]!.data.statusReason).toMatchObject({ code: "MODEL_ERROR" });
    expect(events[1]!.data.statusReason).toBeNull();
  });

  it("go only to the endpoints of the agent's account that subscribe to their type", async () => {
    const tenant = await h.tenant();
    const stranger = await h.tenant();
    const deletions = await subscribe(tenant, ["agent.deleted"]);
    const disabled = await subscribe(tenant, ["*"]);
    const theirs = await subscribe(stranger, ["*"]);
    const webhooks = await api<{ id: string; url: string }[]>(tenant, "GET", "/v1/webhooks");
    const off = webhooks.body.data.find((w) => w.url === receiver.url(`events-${paths - 1}`))!;
    await api(tenant, "PATCH", `/v1/webhooks/${off.id}`, { enabled: false });

    const created = await api<{ id: string }>(tenant, "POST", "/v1/agents", { name: "Cy" });
    await api(tenant, "PATCH", `/v1/agents/${created.body.data.id}`, { goals: ["g"] });
    await api(tenant, "DELETE", `/v1/agents/${created.body.data.id}`);

    await expect.poll(() => deletions.events().length, { timeout: 15_000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(deletions.events()[0]).toMatchObject({
      type: "agent.deleted",
      data: { id: created.body.data.id },
    });
    expect(disabled.events()).toEqual([]);
    expect(theirs.events()).toEqual([]);
  });
});

describe("message events", () => {
  async function streamed(tenant: Tenant, agentId: string, text: string) {
    const res = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ text, stream: true }),
    });
    return parseEventStream(await res.text()).events;
  }

  it("message.completed carries the reply object exactly as the send answered it, unary and streamed", async () => {
    const tenant = await h.tenant();
    const completed = await subscribe(tenant, ["message.completed"]);
    const agent = await api<{ id: string }>(tenant, "POST", "/v1/agents", { name: "Dee" });
    const id = agent.body.data.id;

    openai.reply("Hello there.");
    const sent = await api<Record<string, unknown>>(tenant, "POST", `/v1/agents/${id}/messages`, {
      text: "Hi",
      userId: "u1",
      roomId: "r1",
    });
    expect(sent.status).toBe(200);
    openai.reply("Once upon a time");
    const stream = await streamed(tenant, id, "A story?");
    const streamCompleted = stream.find((event) => event.event === "message.completed")!.data;

    await expect.poll(() => completed.events().length, { timeout: 15_000 }).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = completed.events();
    expect(events.map((e) => e.type)).toEqual(["message.completed", "message.completed"]);
    for (const event of events) expect(event.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(events[0]!.data).toEqual(sent.body.data);
    expect(events[0]!.createdAt).toBe(sent.body.data.createdAt);
    expect(events[1]!.data).toEqual(streamCompleted);
    expect(events[1]!.data).toMatchObject({ text: "Once upon a time", userId: null, roomId: null });
    // Byte for byte: the delivered body holds the reply's JSON as the API wrote it.
    expect(completed.bodies()[0]).toContain(`"data":${JSON.stringify(sent.body.data)}`);
  });

  it("erasing a user removes their message.completed events and delivery log from the webhooks service", async () => {
    const tenant = await h.tenant();
    const completed = await subscribe(tenant, ["message.completed"]);
    const endpoint = (await api<{ id: string }[]>(tenant, "GET", "/v1/webhooks")).body.data[0]!.id;
    const agent = (await api<{ id: string }>(tenant, "POST", "/v1/agents", { name: "Eve" })).body.data.id;
    for (const userId of ["gone", "stays"]) {
      openai.reply(`Hello ${userId}.`);
      expect((await api(tenant, "POST", `/v1/agents/${agent}/messages`, { text: "Hi", userId })).status).toBe(
        200,
      );
    }
    await expect.poll(() => completed.events().length, { timeout: 15_000 }).toBe(2);
    const logged = async () => {
      const page = await api<{ eventId: string }[]>(tenant, "GET", `/v1/webhooks/${endpoint}/deliveries`);
      return page.body.data.map((delivery) => delivery.eventId).sort();
    };
    const byUser = Object.fromEntries(completed.events().map((e) => [e.data.userId as string, e.id]));
    await expect.poll(logged).toEqual([byUser.gone, byUser.stays].sort());

    const erased = await api(tenant, "DELETE", "/v1/users/gone");
    expect(erased.status).toBe(200);
    expect(await logged()).toEqual([byUser.stays]);
  });

  it("message.failed names the message and the error the caller got when the provider fails", async () => {
    const tenant = await h.tenant();
    const failed = await subscribe(tenant, ["message.failed"]);
    const completed = await subscribe(tenant, ["message.completed"]);
    const agent = await api<{ id: string }>(tenant, "POST", "/v1/agents", { name: "Eve" });
    const id = agent.body.data.id;

    openai.failWith(500);
    const unary = await h.request<{ error: { code: string; message: string } }>(
      "POST",
      `/v1/agents/${id}/messages`,
      { key: tenant.key, body: { text: "Hi" } },
    );
    expect(unary.status).toBe(503);
    openai.reply("one two three four", { cutAfter: 2 });
    const stream = await streamed(tenant, id, "Hi again");
    const started = stream.find((event) => event.event === "message.started")!.data as { id: string };
    const error = stream.find((event) => event.event === "error")!.data as { code: string; message: string };

    await expect.poll(() => failed.events().length, { timeout: 15_000 }).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = failed.events();
    expect(events.map((e) => e.type)).toEqual(["message.failed", "message.failed"]);
    expect(events[0]!.data).toEqual({
      agentId: id,
      messageId: expect.stringMatching(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/),
      code: "AGENT_UNAVAILABLE",
      message: unary.body.error.message,
    });
    expect(events[1]!.data).toEqual({
      agentId: id,
      messageId: started.id,
      code: error.code,
      message: error.message,
    });
    expect(completed.events()).toEqual([]);
  });
});
