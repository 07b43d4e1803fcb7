import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { deliveryBody, generateSecret, signDelivery } from "./signing.js";

describe("signing", () => {
  it("makes whsec_ secrets of 24 random bytes", () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(24);
    expect(generateSecret()).not.toBe(secret);
  });

  it("signs as the standardwebhooks package does", () => {
    const secret = generateSecret();
    const body = deliveryBody({
      id: "evt_1",
      type: "agent.created",
      createdAt: "2026-01-01T00:00:00.000Z",
      data: '{"a":1}',
    });
    const at = new Date(1_767_225_600_000);
    const headers = signDelivery("evt_1", body, [secret], at);
    expect(headers).toEqual({
      "webhook-id": "evt_1",
      "webhook-timestamp": "1767225600",
      "webhook-signature": new Webhook(secret).sign("evt_1", at, body),
    });
  });

  it("signs with every secret given, space-separated, each verifying alone", () => {
    const [current, previous] = [generateSecret(), generateSecret()];
    const body = '{"id":"evt_2"}';
    const headers = signDelivery("evt_2", body, [current, previous]);
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    for (const secret of [current, previous])
      expect(new Webhook(secret).verify(body, { ...headers })).toEqual({ id: "evt_2" });
    expect(() => new Webhook(generateSecret()).verify(body, { ...headers })).toThrow();
  });

  it("builds the body with the published data text as it is", () => {
    expect(
      deliveryBody({
        id: "evt_3",
        type: "agent.deleted",
        createdAt: "2026-01-01T00:00:00.000Z",
        data: '{"id":"agt_1"}',
      }),
    ).toBe(
      '{"id":"evt_3","type":"agent.deleted","createdAt":"2026-01-01T00:00:00.000Z","data":{"id":"agt_1"}}',
    );
  });
});
