import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  Agentry,
  AgentryError,
  type WebhookEvent,
  WebhookVerificationError,
  type WebhookVerificationFailure,
  webhooks,
} from "../src/index.js";
import { agent, reply } from "./helpers.js";

// The Standard Webhooks reference library (npm `standardwebhooks`) signs what we verify and verifies what we
// sign: both sides of the scheme are checked against an implementation other than ours.

function newSecret(): string {
  const key = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...key))}`;
}

const secret = newSecret();
const reference = new Webhook(secret);
const body = JSON.stringify({
  id: "evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  type: "agent.created",
  createdAt: "2026-11-20T09:30:00.000Z",
  data: agent(),
});
const NOW = new Date("2026-11-20T09:30:05Z");
const now = () => NOW.getTime();

/** The headers of a delivery signed by the reference library. */
function signed(
  payload: string = body,
  at: Date = NOW,
  signature?: string,
): Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string> {
  return {
    "webhook-id": "evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signature ?? reference.sign("evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1", at, payload),
  };
}

async function failure(promise: Promise<unknown>): Promise<WebhookVerificationFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  expect(error).toBeInstanceOf(AgentryError);
  return (error as WebhookVerificationError).reason;
}

describe("webhooks.verify", () => {
  it("accepts a delivery signed by the reference library", async () => {
    await expect(webhooks.verify(body, signed(), secret, { now })).resolves.toBeUndefined();
  });

  it("accepts the body as bytes and the headers as a Headers object or any-case record", async () => {
    const bytes = new TextEncoder().encode(body);
    await webhooks.verify(bytes, new Headers(signed()), secret, { now });
    await webhooks.verify(bytes.buffer, new Headers(signed()), secret, { now });
    const h = signed();
    const upper = {
      "Webhook-Id": h["webhook-id"],
      "WEBHOOK-TIMESTAMP": h["webhook-timestamp"],
      "Webhook-Signature": h["webhook-signature"],
      "Content-Type": "application/json",
    };
    await webhooks.verify(body, upper, secret, { now });
  });

  it("accepts the secret without its whsec_ prefix", async () => {
    await webhooks.verify(body, signed(), secret.slice("whsec_".length), { now });
  });

  it("checks bytes exactly: non-ASCII text as bytes and as a string", async () => {
    const text = JSON.stringify({
      id: "evt_1",
      type: "webhook.test",
      createdAt: NOW.toISOString(),
      data: { note: "é ü 字 🙂" },
    });
    await webhooks.verify(text, signed(text), secret, { now });
    await webhooks.verify(new TextEncoder().encode(text), signed(text), secret, { now });
  });

  it("refuses a tampered body, and a body parsed and serialized again", async () => {
    expect(await failure(webhooks.verify(body.replace("Ada", "Eve"), signed(), secret, { now }))).toBe(
      "signature_mismatch",
    );
    const reserialized = JSON.stringify(JSON.parse(body), null, 2);
    expect(await failure(webhooks.verify(reserialized, signed(), secret, { now }))).toBe(
      "signature_mismatch",
    );
  });

  it("refuses a signature made with another secret", async () => {
    expect(await failure(webhooks.verify(body, signed(), newSecret(), { now }))).toBe("signature_mismatch");
  });

  it("refuses a delivery with a header missing or empty", async () => {
    for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"] as const) {
      const headers: Record<string, string> = signed();
      delete headers[name];
      expect(await failure(webhooks.verify(body, headers, secret, { now }))).toBe("missing_headers");
      expect(await failure(webhooks.verify(body, { ...signed(), [name]: "" }, secret, { now }))).toBe(
        "missing_headers",
      );
    }
    expect(await failure(webhooks.verify(body, {}, secret, { now }))).toBe("missing_headers");
  });

  it("refuses a timestamp outside the tolerance, 5 minutes by default, either way", async () => {
    const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
    await webhooks.verify(body, signed(body, at(-300)), secret, { now });
    await webhooks.verify(body, signed(body, at(300)), secret, { now });
    expect(await failure(webhooks.verify(body, signed(body, at(-301)), secret, { now }))).toBe(
      "timestamp_too_old",
    );
    expect(await failure(webhooks.verify(body, signed(body, at(301)), secret, { now }))).toBe(
      "timestamp_too_new",
    );
    await webhooks.verify(body, signed(body, at(-3600)), secret, { now, tolerance: 2 * 3_600_000 });
    expect(
      await failure(webhooks.verify(body, signed(body, at(-60)), secret, { now, tolerance: 30_000 })),
    ).toBe("timestamp_too_old");
  });

  it("uses the real clock by default", async () => {
    const headers = signed(body, new Date());
    await webhooks.verify(body, headers, secret);
    expect(await failure(webhooks.verify(body, signed(), secret))).toBe("timestamp_too_old");
  });

  it("refuses a timestamp that is not Unix seconds", async () => {
    for (const value of ["", "soon", "1.5e9", "-1", "2026-11-20T09:30:05Z"]) {
      const reason = await failure(
        webhooks.verify(body, { ...signed(), "webhook-timestamp": value }, secret, { now }),
      );
      expect(reason).toBe(value === "" ? "missing_headers" : "invalid_timestamp");
    }
  });

  it("passes during a rotation when any of several signatures matches", async () => {
    const stale = new Webhook(newSecret()).sign("evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1", NOW, body);
    const current = signed()["webhook-signature"];
    await webhooks.verify(body, signed(body, NOW, `${stale} ${current}`), secret, { now });
    await webhooks.verify(body, signed(body, NOW, `${current} ${stale}`), secret, { now });
    // The form proxies and Node give several header lines joined.
    await webhooks.verify(body, signed(body, NOW, `${stale}, ${current}`), secret, { now });
    await webhooks.verify(body, { ...signed(), "webhook-signature": [stale, current] }, secret, { now });
    expect(
      await failure(webhooks.verify(body, signed(body, NOW, `${stale} ${stale}`), secret, { now })),
    ).toBe("signature_mismatch");
  });

  it("ignores signatures of other versions and ones it cannot read", async () => {
    const v1 = signed()["webhook-signature"];
    const v2 = v1.replace(/^v1,/, "v2,");
    expect(await failure(webhooks.verify(body, signed(body, NOW, v2), secret, { now }))).toBe("no_signature");
    await webhooks.verify(body, signed(body, NOW, `${v2} ${v1}`), secret, { now });
    for (const junk of ["v1", "v1,", "v1,!!!", "garbage", v1.slice(3)]) {
      expect(await failure(webhooks.verify(body, signed(body, NOW, junk), secret, { now }))).toBe(
        "no_signature",
      );
      await webhooks.verify(body, signed(body, NOW, `${junk} ${v1}`), secret, { now });
    }
  });

  it("reports a secret that is not one as a usage error, not a failed verification", async () => {
    for (const bad of ["", "whsec_", "whsec_not base64!"]) {
      const error = await webhooks.verify(body, signed(), bad, { now }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AgentryError);
      expect(error).not.toBeInstanceOf(WebhookVerificationError);
    }
    await expect(webhooks.verify(body, signed(), secret, { now, tolerance: -1 })).rejects.toThrow(
      /tolerance/,
    );
  });
});

describe("webhooks.sign", () => {
  it("signs deliveries the reference library verifies", async () => {
    const headers = await webhooks.sign(body, secret, { id: "evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1" });
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(reference.verify(body, headers)).toEqual(JSON.parse(body));
    const prefixless = await webhooks.sign(body, secret.slice(6), { id: "evt_2" });
    expect(reference.verify(body, prefixless)).toEqual(JSON.parse(body));
  });

  it("gives the reference library's signature for the same id, time and body", async () => {
    const headers = await webhooks.sign(new TextEncoder().encode(body), secret, {
      id: "evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
      timestamp: NOW,
    });
    expect(headers).toEqual(signed());
  });

  it("needs an id", async () => {
    await expect(webhooks.sign(body, secret, { id: "" })).rejects.toBeInstanceOf(AgentryError);
  });
});

describe("webhooks.unwrap", () => {
  async function deliver(event: object): Promise<WebhookEvent> {
    const payload = JSON.stringify(event);
    return await webhooks.unwrap(payload, signed(payload), secret, { now });
  }

  it("returns the event, its type narrowing its data", async () => {
    const event = await webhooks.unwrap(body, signed(), secret, { now });
    expect(event).toEqual(JSON.parse(body));
    if (event.type !== "agent.created") throw new Error(`unexpected ${event.type}`);
    expect(event.data.name).toBe(agent().name);

    const completed = await deliver({
      id: "evt_2",
      type: "message.completed",
      createdAt: NOW.toISOString(),
      data: reply(),
    });
    expect(completed.type === "message.completed" && completed.data.text).toBe(reply().text);

    const failed = await deliver({
      id: "evt_3",
      type: "message.failed",
      createdAt: NOW.toISOString(),
      data: { agentId: "agt_1", messageId: "msg_1", code: "MODEL_ERROR", message: "The provider failed." },
    });
    expect(failed.type === "message.failed" && failed.data.code).toBe("MODEL_ERROR");

    const deleted = await deliver({
      id: "evt_4",
      type: "agent.deleted",
      createdAt: NOW.toISOString(),
      data: { id: "agt_1" },
    });
    expect(deleted.type === "agent.deleted" && deleted.data.id).toBe("agt_1");
  });

  it("returns events of types it does not know as they came", async () => {
    const event = await deliver({
      id: "evt_5",
      type: "agent.renamed",
      createdAt: NOW.toISOString(),
      data: { x: 1 },
    });
    expect(event).toEqual({
      id: "evt_5",
      type: "agent.renamed",
      createdAt: NOW.toISOString(),
      data: { x: 1 },
    });
  });

  it("verifies before it parses, and refuses a signed body that is not an event", async () => {
    expect(await failure(webhooks.unwrap("{not json", signed(), secret, { now }))).toBe("signature_mismatch");
    for (const payload of ["{not json", "[]", "null", '{"type":"agent.created"}']) {
      expect(await failure(webhooks.unwrap(payload, signed(payload), secret, { now }))).toBe(
        "invalid_payload",
      );
    }
  });

  it("is on the client too", async () => {
    const client = new Agentry({ apiKey: "agentry_sk_test" });
    expect(client.webhooks).toBe(webhooks);
    const event = await client.webhooks.unwrap(body, signed(), secret, { now });
    expect(event.id).toBe("evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1");
  });
});
