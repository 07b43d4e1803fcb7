import { existsSync } from "node:fs";
import type { CallRecord, ConversationStore } from "@agentry/conversation";
import { openConversationStore } from "@agentry/conversation";
import { afterAll, describe, expect, test } from "vitest";
import { cleanUp, createAccount, lines, oneLine, run, tempDataDir } from "./harness.js";

afterAll(cleanUp);

let sequence = 0;

/** A send as the service records it, at a given time. */
async function send(
  store: ConversationStore,
  accountId: string,
  at: string,
  overrides: Partial<CallRecord> = {},
) {
  sequence += 1;
  const id = `msg_01JTESTUSAGE${String(sequence).padStart(14, "0")}`;
  const record: CallRecord = {
    accountId,
    agentId: "agt_A",
    userId: "u1",
    roomId: "",
    id,
    requestId: null,
    apiKeyId: "key_1",
    provider: "openai",
    model: "gpt-test",
    stream: false,
    outcome: "completed",
    errorCode: null,
    errorMessage: null,
    latencyMs: 200,
    firstTokenMs: 80,
    inputTokens: 10,
    outputTokens: 4,
    createdAt: at,
    ...overrides,
  };
  if (record.outcome !== "completed") {
    await store.recordCall(record);
    return;
  }
  const key = { accountId, agentId: record.agentId, userId: record.userId, roomId: "" };
  await store.saveExchange(
    {
      key,
      user: { id: `${id}U`, text: "hello", createdAt: at },
      reply: {
        id,
        text: "hi",
        model: record.model ?? "",
        provider: "openai",
        inputTokens: record.inputTokens,
        outputTokens: record.outputTokens,
        latencyMs: record.latencyMs,
        finishReason: "stop",
        createdAt: at,
      },
    },
    record,
  );
}

/** An account with sends in two hours of 2026-03-10, by two agents; the other account's sends are not its. */
async function seeded() {
  const dataDir = await tempDataDir();
  const account = await createAccount(dataDir, ["acme"]);
  const other = await createAccount(dataDir, ["other"]);
  const store = await openConversationStore({ dataDir });
  try {
    await send(store, account.id, "2026-03-10T10:05:00.000Z", { latencyMs: 100, firstTokenMs: 40 });
    await send(store, account.id, "2026-03-10T10:35:00.000Z", {
      agentId: "agt_B",
      userId: "",
      model: "gpt-big",
    });
    await send(store, account.id, "2026-03-10T12:15:00.000Z", {
      outcome: "failed",
      errorCode: "MODEL_ERROR",
      errorMessage: "The model refused.",
      inputTokens: 0,
      outputTokens: 0,
    });
    await send(store, other.id, "2026-03-10T10:05:00.000Z");
  } finally {
    await store.close();
  }
  return { dataDir, account };
}

const HOURS = ["--from", "2026-03-10T10:00:00Z", "--to", "2026-03-10T13:00:00Z", "--granularity", "hour"];

describe("usage", () => {
  test("prints a row per period, zero-filled, then the totals", async () => {
    const { dataDir, account } = await seeded();
    const result = await run(["usage", "--account", "acme", ...HOURS], dataDir);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const [title, header, ...rows] = lines(result.stdout);
    expect(title).toBe(
      `Usage of account acme (${account.id}) from 2026-03-10T10:00:00Z to 2026-03-10T13:00:00Z, by hour:`,
    );
    expect(header?.split(/\s{2,}/)).toEqual([
      "START",
      "MESSAGES",
      "ERRORS",
      "TOKENS IN",
      "TOKENS OUT",
      "LATENCY P50",
      "LATENCY P95",
      "TTFT P50",
      "TTFT P95",
    ]);
    expect(rows.map((row) => row.split(/\s+/))).toEqual([
      ["2026-03-10T10:00:00Z", "2", "0", "20", "8", "100", "100", "40", "40"],
      ["2026-03-10T11:00:00Z", "0", "0", "0", "0", "-", "-", "-", "-"],
      ["2026-03-10T12:00:00Z", "1", "1", "0", "0", "-", "-", "-", "-"],
      ["total", "3", "1", "20", "8", "100", "100", "40", "40"],
    ]);
  });

  test("groups and filters as asked; a blank dimension shows as -", async () => {
    const { dataDir } = await seeded();
    const grouped = await run(
      ["usage", "--account", "acme", ...HOURS, "--group-by", "agentId,userId"],
      dataDir,
    );
    expect(grouped.code).toBe(0);
    const [, header, ...rows] = lines(grouped.stdout);
    expect(header?.split(/\s{2,}/).slice(0, 4)).toEqual(["START", "AGENT", "USER", "MESSAGES"]);
    expect(rows.map((row) => row.split(/\s+/).slice(0, 5))).toEqual([
      ["2026-03-10T10:00:00Z", "agt_A", "u1", "1", "0"],
      ["2026-03-10T10:00:00Z", "agt_B", "-", "1", "0"],
      ["2026-03-10T12:00:00Z", "agt_A", "u1", "1", "1"],
      ["total", "agt_A", "u1", "2", "1"],
      ["total", "agt_B", "-", "1", "0"],
    ]);

    const filtered = await run(
      ["usage", "--account", "acme", "--from", "2026-03-10", "--to", "2026-03-11", "--agent", "agt_B"],
      dataDir,
    );
    expect(lines(filtered.stdout).slice(2)).toEqual([
      expect.stringMatching(/^2026-03-10T00:00:00Z\s+1\s+0\s+10\s+4\s/),
      expect.stringMatching(/^total\s+1\s/),
    ]);
    const user = await run(
      ["usage", "--account", "acme", "--from", "2026-03-10", "--user", "u1", "--json"],
      dataDir,
    );
    expect(JSON.parse(user.stdout).totals[0].figures).toMatchObject({ messages: 2, errors: 1 });
  });

  test("--json prints the answer itself, with the account's id", async () => {
    const { dataDir, account } = await seeded();
    const result = await run(
      ["usage", "--account", account.id, ...HOURS, "--group-by", "model", "--json"],
      dataDir,
    );
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      accountId: account.id,
      from: "2026-03-10T10:00:00.000Z",
      to: "2026-03-10T13:00:00.000Z",
      granularity: "hour",
    });
    expect(report.buckets).toHaveLength(3);
    expect(report.totals.map((g: { model: string }) => g.model)).toEqual(["gpt-big", "gpt-test"]);
  });

  test.each([
    [["usage"], "agentry usage: missing --account NAME"],
    [["usage", "--account", "acme", "--granularity", "week"], "--granularity takes hour or day, got 'week'"],
    [["usage", "--account", "acme", "--group-by", "roomId"], "unknown dimension 'roomId'"],
    [["usage", "--account", "acme", "--from", "yesterday"], "--from takes an ISO 8601 date"],
    [["usage", "--account", "acme", "--from", "2026-03-10", "--to", "2026-03-10"], "--to must be after from"],
    [
      ["usage", "--account", "acme", "--granularity", "hour", "--from", "2026-01-01", "--to", "2026-03-01"],
      "--to must be at most 31 days after from for hour buckets",
    ],
    [["usage", "extra"], "unexpected argument 'extra'"],
  ])("%j is a usage error (exit 2) that opens no store", async (args, expected) => {
    const dataDir = await tempDataDir();
    const result = await run(args, dataDir);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain(expected);
    expect(existsSync(dataDir)).toBe(false);
  });

  test("an unknown account fails (exit 1)", async () => {
    const { dataDir } = await seeded();
    const result = await run(["usage", "--account", "nobody"], dataDir);
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toBe("agentry usage: no account named 'nobody'");
  });

  test.each([[["usage", "--help"]], [["help", "usage"]], [["usage", "help"]]])(
    "%j prints its help",
    async (args) => {
      const result = await run(args, await tempDataDir());
      expect(result).toMatchObject({ code: 0, stderr: "" });
      expect(result.stdout).toContain("Usage: agentry usage --account NAME [--from ISO8601]");
    },
  );
});
