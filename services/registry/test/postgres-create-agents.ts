/**
 * One contender of the cross-process quota test on Postgres: opens the registry store from a DATABASE_URL (so
 * it migrates, racing the other contender), says "ready", waits for "go <accountId>" on stdin, creates agents
 * as fast as it can and prints what happened as one JSON line. Usage: postgres-create-agents.ts <databaseUrl>
 * <count>
 */
import { once } from "node:events";
import { createInterface } from "node:readline";
import { AppError } from "@agentry/errors";
import { openRegistryStore } from "../src/index.js";

const [databaseUrl, count] = process.argv.slice(2);
if (!databaseUrl || !count) throw new Error("usage: postgres-create-agents.ts <databaseUrl> <count>");

const store = await openRegistryStore({ dataDir: "unused", databaseUrl });
const lines = createInterface({ input: process.stdin });
process.stdout.write("ready\n");
const [go] = (await once(lines, "line")) as [string];
const accountId = go.replace(/^go /, "");

const outcome = { created: 0, quota: 0, other: [] as string[] };
await Promise.all(
  Array.from({ length: Number(count) }, async (_, i) => {
    try {
      await store.createAgent(accountId, {
        name: `agent ${process.pid} ${i}`,
        bio: [],
        personality: {},
        knowledge: [],
        goals: [],
        clients: [],
        settings: {},
        modelProvider: null,
        model: null,
        plugins: [],
      });
      outcome.created++;
    } catch (error) {
      if (error instanceof AppError && error.code === "INSUFFICIENT_QUOTA") outcome.quota++;
      else outcome.other.push(String(error));
    }
  }),
);
await store.close();
lines.close();
process.stdout.write(`${JSON.stringify(outcome)}\n`);
