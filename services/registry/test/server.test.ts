import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { AccountService } from "@agentry/proto";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TEST_SECRETS_KEY } from "./harness.js";

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));

let dataDir: string;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "agentry-registry-server-"));
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

/** A GET over HTTP/2 without TLS, on a connection of its own. */
async function get(baseUrl: string, path: string): Promise<number> {
  const session = http2.connect(baseUrl);
  try {
    const request = session.request({ ":path": path });
    const [headers] = (await once(request, "response")) as [http2.IncomingHttpHeaders];
    request.resume();
    await once(request, "end");
    return Number(headers[":status"]);
  } finally {
    session.close();
  }
}

describe("registry process", () => {
  it("starts from the environment, serves, and exits 0 on SIGTERM", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: PACKAGE_DIR,
      env: {
        ...process.env,
        REGISTRY_PORT: "0",
        DATA_DIR: dataDir,
        SECRETS_KEY: TEST_SECRETS_KEY,
        LOG_FORMAT: "json",
        LOG_LEVEL: "info",
      },
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const lines: Record<string, unknown>[] = [];
    const listening = new Promise<number>((resolve, reject) => {
      createInterface({ input: child.stdout }).on("line", (line) => {
        const entry = JSON.parse(line) as Record<string, unknown>;
        lines.push(entry);
        if (entry.msg === "listening") resolve(entry.port as number);
      });
      child.once("exit", (code) => reject(new Error(`registry exited with ${code}: ${stderr}`)));
    });
    const exited = once(child, "exit");
    try {
      const port = await listening;
      const baseUrl = `http://127.0.0.1:${port}`;
      const accounts = createClient(AccountService, createConnectTransport({ baseUrl, httpVersion: "2" }));
      await accounts.createAccount({ name: "acme" });
      expect(await get(baseUrl, "/readyz")).toBe(200);

      child.kill("SIGTERM");
      const [code] = await exited;
      expect(code).toBe(0);
      expect(lines.map((l) => l.msg)).toEqual(
        expect.arrayContaining(["account created", "shutting down", "stopped"]),
      );
      expect(lines.every((l) => l.service === "registry")).toBe(true);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("stops with one clear line when the environment is invalid", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: PACKAGE_DIR,
      env: { ...process.env, REGISTRY_PORT: "not-a-port", DATA_DIR: dataDir, SECRETS_KEY: TEST_SECRETS_KEY },
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toContain("REGISTRY_PORT");
  });

  it("refuses to start without SECRETS_KEY, or with one that is not 32 bytes", async () => {
    for (const secretsKey of [undefined, "dG9vIHNob3J0"]) {
      const { SECRETS_KEY: _, ...rest } = process.env;
      const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
        cwd: PACKAGE_DIR,
        env: {
          ...rest,
          REGISTRY_PORT: "0",
          DATA_DIR: dataDir,
          ...(secretsKey ? { SECRETS_KEY: secretsKey } : {}),
        },
      });
      let stderr = "";
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const [code] = await once(child, "exit");
      expect(code).toBe(1);
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(stderr).toMatch(/SECRETS_KEY: .*base64 of 32 random bytes/);
      expect(stderr).not.toContain("dG9vIHNob3J0");
    }
  });
});
