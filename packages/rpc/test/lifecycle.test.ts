import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { STOP_MARGIN_MS } from "../src/index.js";

/** The fixture's stop may take this long for work in flight (its `graceMs`). */
const FIXTURE_GRACE_MS = 100;

interface Served {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  /** Resolves to the exit code once the process has ended. */
  exited: Promise<number | null>;
  readonly stderr: string;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

/** Starts the fixture as a process of its own and waits for its first line (listening, or failing to). */
async function serve(
  mode: "clean" | "throws" | "hangs" | "busy" | "misconfigured" | "broken",
): Promise<Served> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, "fixtures", "serve.ts"), mode],
    {
      cwd: join(import.meta.dirname, ".."),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  // "close", not "exit": every line the process wrote has been read by then.
  const exited = once(child, "close").then(([code]) => code as number | null);
  const lines: Record<string, unknown>[] = [];
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const first = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(JSON.parse(line));
      resolve();
    });
  });
  await Promise.race([first, exited]);
  return {
    child,
    lines,
    exited,
    get stderr() {
      return stderr;
    },
  };
}

const messages = (served: Served) => served.lines.map((line) => line.msg);

describe("serveUntilSignalled", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "logs where it listens, and on %s runs the stop, logs it and exits 0",
    async (signal) => {
      const served = await serve("clean");
      const listening = served.lines[0]!;
      expect(listening).toMatchObject({ msg: "listening", host: "127.0.0.1" });
      const answer = await fetch(`http://127.0.0.1:${String(listening.port)}/`);
      expect(await answer.text()).toBe("ok");

      served.child.kill(signal);
      expect(await served.exited).toBe(0);
      expect(messages(served)).toEqual(["listening", "shutting down", "stop ran", "stopped"]);
      expect(served.lines[1]).toMatchObject({ signal });
    },
  );

  it("exits 1 when the stop throws, with the error logged", async () => {
    const served = await serve("throws");
    served.child.kill("SIGTERM");
    expect(await served.exited).toBe(1);
    expect(messages(served)).toEqual(["listening", "shutting down", "stop ran", "stop failed"]);
    expect(served.lines.at(-1)).toMatchObject({ level: 50, err: { message: "the store would not close" } });
  });

  it("cuts off a stop that hangs once its grace and the margin have passed, and exits 1", async () => {
    const served = await serve("hangs");
    const signalled = Date.now();
    served.child.kill("SIGTERM");
    expect(await served.exited).toBe(1);
    const tookMs = Date.now() - signalled;
    expect(tookMs).toBeGreaterThanOrEqual(FIXTURE_GRACE_MS + STOP_MARGIN_MS);
    expect(tookMs).toBeLessThan(FIXTURE_GRACE_MS + STOP_MARGIN_MS + 10_000);
    expect(messages(served)).toEqual([
      "listening",
      "shutting down",
      "stop ran",
      "stop did not finish in time; exiting with what is still open",
    ]);
  });

  it("exits 1 with the error logged when it cannot listen", async () => {
    const served = await serve("busy");
    expect(await served.exited).toBe(1);
    expect(served.lines).toEqual([
      expect.objectContaining({
        msg: "failed to start",
        level: 50,
        err: expect.objectContaining({ code: "EADDRINUSE" }),
      }),
    ]);
  });

  it("stops a main that fails before serving with exit code 1 and one message: the configuration's line, or the stack", async () => {
    const misconfigured = await serve("misconfigured");
    expect(await misconfigured.exited).toBe(1);
    expect(misconfigured.stderr).toBe("invalid configuration: PORT must be a number\n");

    const broken = await serve("broken");
    expect(await broken.exited).toBe(1);
    expect(broken.stderr).toMatch(
      /^lifecycle fixture failed to start: Error: the database could not be opened\n\s+at /,
    );
  });
});
