import { existsSync } from "node:fs";
import { openRegistryStore, type RegistryStore } from "@agentry/registry";
import { afterAll, describe, expect, test } from "vitest";
import { runCli } from "../src/index.js";
import { cleanUp, oneLine, run, tempDataDir } from "./harness.js";

afterAll(cleanUp);

describe("help", () => {
  test.each([[["--help"]], [["-h"]], [["help"]]])("%j prints the overview", async (args) => {
    const dataDir = await tempDataDir();
    const result = await run(args, dataDir);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toContain("Usage:\n  agentry <group> <command> [options]");
    for (const command of [
      "accounts create",
      "accounts list",
      "keys create",
      "keys list",
      "keys revoke",
      "agents import",
      "agents export",
    ]) {
      expect(result.stdout).toContain(command);
    }
    expect(existsSync(dataDir)).toBe(false);
  });

  test.each([
    [["accounts", "--help"], "agentry accounts create NAME"],
    [["help", "keys"], "agentry keys revoke KEY_ID"],
    [["keys", "help"], "agentry keys list --account NAME"],
    [
      ["accounts", "create", "--help"],
      "Usage: agentry accounts create NAME [--tier standard|pro|enterprise]",
    ],
    [["accounts", "create", "acme", "-h"], "Usage: agentry accounts create NAME"],
    [["help", "keys", "create"], "Usage: agentry keys create --account NAME"],
    [["keys", "help", "revoke"], "Usage: agentry keys revoke KEY_ID"],
    [["keys", "list", "--help"], "Usage: agentry keys list --account NAME"],
    [["accounts", "list", "-h"], "Usage: agentry accounts list"],
  ])("%j prints help", async (args, expected) => {
    const dataDir = await tempDataDir();
    const result = await run(args, dataDir);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toContain(expected);
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe("command line mistakes", () => {
  test.each([
    [[], "agentry: missing command (run 'agentry --help' for usage)"],
    [["webhooks"], "agentry: unknown command 'webhooks' (run 'agentry --help' for usage)"],
    [["agents"], "agentry agents: missing command, one of import, export"],
    [["--json"], "agentry: unknown command '--json'"],
    [["accounts"], "agentry accounts: missing command, one of create, list"],
    [["keys", "delete"], "agentry keys: unknown command 'delete', expected one of create, list, revoke"],
    [["help", "nope"], "agentry: no help for 'nope'"],
    [["keys", "help", "nope"], "agentry: no help for 'keys nope'"],
    [["accounts", "list", "--verbose"], "agentry accounts list: unknown option '--verbose'"],
    [["accounts", "list", "--json=yes"], "agentry accounts list: option '--json' does not take an argument"],
  ])("%j is a usage error (exit 2)", async (args, expected) => {
    const dataDir = await tempDataDir();
    const result = await run(args, dataDir);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(oneLine(result.stderr)).toContain(expected);
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe("runCli", () => {
  test("opens the store only for a right command line and closes it whatever the outcome", async () => {
    const dataDir = await tempDataDir();
    const events: string[] = [];
    const openStore = async (config: { dataDir: string }): Promise<RegistryStore> => {
      events.push(`open ${config.dataDir}`);
      const store = await openRegistryStore(config);
      const close = store.close.bind(store);
      store.close = async () => {
        events.push("close");
        await close();
      };
      return store;
    };
    let stdout = "";
    let stderr = "";
    const io = {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      env: { DATA_DIR: dataDir },
      openStore,
    };

    expect(await runCli(["accounts", "create", "acme", "--tier", "gold"], io)).toBe(2);
    expect(events).toEqual([]);

    expect(await runCli(["accounts", "create", "acme"], io)).toBe(0);
    expect(await runCli(["accounts", "create", "acme"], io)).toBe(1);
    expect(events).toEqual([`open ${dataDir}`, "close", `open ${dataDir}`, "close"]);
    expect(stdout).toContain("Created account acme.");
    expect(stderr).toBe(
      "agentry accounts create: unknown tier 'gold' (tiers: standard, pro, enterprise) (run 'agentry accounts create --help' for usage)\n" +
        "agentry accounts create: an account named 'acme' already exists\n",
    );
  });

  test("a relative DATA_DIR is resolved against INIT_CWD, then against cwd", async () => {
    const seen: string[] = [];
    const openStore = async (config: { dataDir: string }): Promise<RegistryStore> => {
      seen.push(config.dataDir);
      throw new Error("not opened in this test");
    };
    const io = {
      stdout: { write: () => true },
      stderr: { write: () => true },
      cwd: "/srv/agentry",
      openStore,
    };

    await runCli(["accounts", "list"], { ...io, env: { DATA_DIR: "state", INIT_CWD: "/home/admin" } });
    await runCli(["accounts", "list"], { ...io, env: { DATA_DIR: "state" } });
    await runCli(["accounts", "list"], { ...io, env: {} });
    await runCli(["accounts", "list"], {
      ...io,
      env: { DATA_DIR: "/var/lib/agentry", INIT_CWD: "/home/admin" },
    });
    expect(seen).toEqual([
      "/home/admin/state",
      "/srv/agentry/state",
      "/srv/agentry/data",
      "/var/lib/agentry",
    ]);
  });
});
