import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@agentry/logging";
import { Metrics } from "@agentry/observability";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Delivery, deliverReply, type SendFailure } from "../src/delivery.js";
import { APOLOGY } from "../src/domain/status.js";
import { ConnectorMetrics } from "../src/metrics.js";
import type { ConnectorContext } from "../src/platform.js";
import { openSqliteConnectorStore } from "../src/store/sqlite.js";
import type { ConnectorStore } from "../src/store/types.js";

let dataDir: string;
let store: ConnectorStore;
let metrics: Metrics;
let context: ConnectorContext;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "agentry-delivery-"));
  store = openSqliteConnectorStore({ dataDir });
  metrics = new Metrics({ processMetrics: false });
  context = {
    agentId: "agent_1",
    config: { type: "telegram", respondIn: "mentions", allowedChats: undefined, mode: "polling" },
    secrets: {},
    store,
    metrics: new ConnectorMetrics(metrics.registry),
    runTurn: async () => undefined,
    logger: silentLogger(),
    holder: "test",
    webhookUrl: undefined,
    authFailed: () => {},
    authAccepted: () => {},
  };
});
afterEach(async () => {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

class SendError extends Error {
  constructor(readonly failure: SendFailure) {
    super(failure);
  }
}

function delivery(sent: string[], overrides: Partial<Delivery> = {}): Delivery {
  return {
    platform: "telegram",
    messageKey: "telegram:1:5:9",
    writtenAt: Date.now() - 2_000,
    reply: "Hello.",
    send: async (piece) => {
      sent.push(piece);
    },
    classify: (error) => (error instanceof SendError ? error.failure : "unknown"),
    ...overrides,
  };
}

const metricValue = async (name: string, labels: string) => {
  const text = await metrics.registry.metrics();
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
};

describe("deliverReply", () => {
  it("sends a reply once however often it is delivered, and counts it with its lag", async () => {
    const sent: string[] = [];
    await deliverReply(context, delivery(sent));
    await deliverReply(context, delivery(sent));
    expect(sent).toEqual(["Hello."]);
    expect(await store.answered("telegram:1:5:9")).toBe(true);
    expect(await metricValue("agentry_connector_replies_sent_total", 'platform="telegram"')).toBe(1);
    expect(await metricValue("agentry_connector_reply_lag_seconds_count", 'platform="telegram"')).toBe(1);
    const lag = await metricValue("agentry_connector_reply_lag_seconds_sum", 'platform="telegram"');
    expect(lag).toBeGreaterThanOrEqual(2);
    expect(lag).toBeLessThan(10);
  });

  it("sends the apology for a failed turn", async () => {
    const sent: string[] = [];
    await deliverReply(context, delivery(sent, { reply: undefined }));
    expect(sent).toEqual([APOLOGY]);
  });

  it("gives the claim back when the platform refused the first message for now, so a retry answers", async () => {
    const sent: string[] = [];
    const refused = delivery(sent, {
      send: async () => {
        throw new SendError("refused-retryable");
      },
    });
    await expect(deliverReply(context, refused)).rejects.toThrow("refused-retryable");
    expect(await store.answered("telegram:1:5:9")).toBe(false);
    await deliverReply(context, delivery(sent));
    expect(sent).toEqual(["Hello."]);
    expect(await metricValue("agentry_connector_failures_total", 'platform="telegram",stage="send"')).toBe(1);
  });

  it("never sends again when the platform may have taken the message or refused it for good", async () => {
    for (const failure of ["unknown", "refused"] as const) {
      const messageKey = `telegram:1:5:${failure}`;
      const sent: string[] = [];
      await deliverReply(
        context,
        delivery(sent, {
          messageKey,
          send: async () => {
            throw new SendError(failure);
          },
        }),
      );
      expect(await store.answered(messageKey)).toBe(true);
      await deliverReply(context, delivery(sent, { messageKey }));
      expect(sent).toEqual([]);
    }
  });

  it("keeps the claim once part of a split reply is out", async () => {
    const sent: string[] = [];
    let calls = 0;
    const long = `${"a".repeat(4000)}.\n\n${"b".repeat(100)}.`;
    await deliverReply(
      context,
      delivery(sent, {
        reply: long,
        send: async (piece) => {
          if (++calls === 2) throw new SendError("refused-retryable");
          sent.push(piece);
        },
      }),
    );
    expect(sent).toHaveLength(1);
    expect(await store.answered("telegram:1:5:9")).toBe(true);
  });
});
