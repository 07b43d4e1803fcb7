import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FULL_ACCESS, generateApiKey } from "@agentry/core";
import { openRegistryStore } from "@agentry/registry";
import { agentFields } from "@agentry/registry/testing";
import { type DeployableProcess, startDeployable } from "@agentry/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeConversation } from "./history-helpers.js";

/**
 * The export streams: the server, a process of its own with a small heap, exports a history far larger than
 * that heap while its resident memory is sampled. Rows are written straight into the conversation database
 * beforehand (`writeConversation`).
 */
const MESSAGES = 200_000;
const TEXT_CHARS = 1_000;
// Well under the export's 200 MiB and more: it cannot be held whole. The server runs from source here, so its
// heap at rest holds every module it compiled, and grows with the product; the RSS checks below bound the export.
const HEAP_MB = 96;

let dataDir: string;
let server: DeployableProcess;
let key: string;
let agentId: string;
let ids: string[] = [];

/** The resident memory of a process, from Linux's /proc, in MiB. */
function residentMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
  return Math.round((kib / 1024) * 10) / 10;
}

async function seed(): Promise<void> {
  const registry = await openRegistryStore({ dataDir });
  const account = await registry.createAccount({ name: "bulk", tier: "standard", limitOverrides: {} });
  const generated = generateApiKey();
  await registry.createApiKey({
    accountId: account.id,
    name: "export",
    scopes: FULL_ACCESS,
    expiresAt: null,
    sha256: generated.sha256,
    prefix: generated.prefix,
  });
  key = generated.secret;
  agentId = (await registry.createAgent(account.id, agentFields({ name: "Bulk" }))).id;
  await registry.close();

  ids = await writeConversation(dataDir, {
    accountId: account.id,
    agentId,
    userId: "bulk-user",
    count: MESSAGES,
    textChars: TEXT_CHARS,
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentry-export-memory-"));
  const seeding = Date.now();
  await seed();
  console.log(
    `seeded ${MESSAGES} messages of ${TEXT_CHARS} characters in ${(Date.now() - seeding) / 1000} s`,
  );
  server = await startDeployable("apps/server", {
    DATA_DIR: dataDir,
    PORT: "0",
    // No message is sent; a provider is configured only because the service needs one to start.
    LOCAL_ENABLED: "false",
    OPENAI_API_KEY: "sk-unused",
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
  });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("GET /v1/users/{userId}/export of 200,000 messages", () => {
  it(`streams them all in constant memory, with a ${HEAP_MB} MiB heap`, async () => {
    const pid = server.child.pid!;
    const samples: { atMs: number; rssMiB: number; bytes: number }[] = [];
    const started = Date.now();
    let bytes = 0;
    const sample = () => samples.push({ atMs: Date.now() - started, rssMiB: residentMiB(pid), bytes });
    sample();
    const sampler = setInterval(sample, 100);

    let lines = 0;
    let mismatches = 0;
    let paused = false;
    try {
      const res = await fetch(`${server.url}/v1/users/bulk-user/export`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
      const decoder = new TextDecoder();
      let rest = "";
      for await (const chunk of res.body!) {
        bytes += chunk.byteLength;
        rest += decoder.decode(chunk, { stream: true });
        let end = rest.indexOf("\n");
        while (end !== -1) {
          const message = JSON.parse(rest.slice(0, end)) as { id: string; agentId: string; text: string };
          if (
            message.id !== ids[lines] ||
            message.agentId !== agentId ||
            !message.text.startsWith(`${lines} `)
          )
            mismatches += 1;
          lines += 1;
          rest = rest.slice(end + 1);
          end = rest.indexOf("\n");
        }
        // A reader that stops for a while: the server must wait for it rather than read ahead into memory.
        if (!paused && lines >= MESSAGES / 10) {
          paused = true;
          await new Promise((resolve) => setTimeout(resolve, 1_500));
        }
      }
      expect(rest).toBe("");
    } finally {
      clearInterval(sampler);
      sample();
    }

    const seconds = (Date.now() - started) / 1000;
    const exportMiB = Math.round(bytes / 1024 / 1024);
    const peak = Math.max(...samples.map((s) => s.rssMiB));
    const baseline = samples[0]!.rssMiB;
    const every = Math.max(1, Math.floor(samples.length / 40));
    console.log(
      [
        `export: ${lines} lines, ${exportMiB} MiB in ${seconds.toFixed(1)} s; server RSS baseline ${baseline} MiB, peak ${peak} MiB (${samples.length} samples, every 100 ms):`,
        ...samples
          .filter((_, i) => i % every === 0 || i === samples.length - 1)
          .map(
            (s) =>
              `  t=${(s.atMs / 1000).toFixed(1)}s  rss=${s.rssMiB} MiB  received=${Math.round(s.bytes / 1024 / 1024)} MiB`,
          ),
      ].join("\n"),
    );

    expect(lines).toBe(MESSAGES);
    expect(mismatches).toBe(0);
    expect(exportMiB).toBeGreaterThan(200);
    expect(server.alive).toBe(true);
    // The baseline is the process as started (modules compiled on load); what the export adds to it is a small
    // fraction of the export, and does not grow with the bytes sent.
    expect(peak - baseline).toBeLessThan(exportMiB / 4);
    const peakWhile = (from: number, to: number) =>
      Math.max(
        ...samples.filter((s) => s.bytes >= from * bytes && s.bytes <= to * bytes).map((s) => s.rssMiB),
      );
    expect(peakWhile(0.5, 1) - peakWhile(0, 0.25)).toBeLessThan(20);
  }, 60_000);
});
