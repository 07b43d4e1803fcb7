import { execFile, execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

/**
 * Postgres for tests. `TEST_DATABASE_URL` (else `DATABASE_URL`) names a server on which the tests create and
 * drop their own databases (and, for privilege tests, roles), so its role needs CREATEDB and CREATEROLE. With
 * neither set, a throwaway server is started from the local PostgreSQL binaries (initdb, pg_ctl) in a
 * temporary directory and stopped afterwards. When no Postgres can be had at all, opening fails with the
 * reason: Postgres suites are never skipped.
 */
export interface TestDatabase {
  /** Connection URL of a fresh, empty database of its own. */
  url: string;
  /**
   * Creates another fresh database on the same server (dropped by `close`) and returns its URL. By default it is
   * copied from `template0` (empty); `{ template: "template1" }` copies the server's `template1` instead, with the
   * extensions its superuser created there (pgvector's `vector`, which a role that is not superuser cannot create).
   */
  createDatabase(options?: CreateOptions): Promise<string>;
  /** Drops every database it created and stops the throwaway server, if one was started. */
  close(): Promise<void>;
}

export interface CreateOptions {
  template?: "template0" | "template1";
}

const execFileAsync = promisify(execFile);

/**
 * Test databases get a linguistic (ICU) default collation when the server supports it, so a query that needs
 * code point order and forgets `COLLATE "C"` fails in tests as it would on a production database.
 */
const CREATE_OPTIONS = [
  "TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'",
  "TEMPLATE template0 ENCODING 'UTF8'",
];

export async function openTestDatabase(): Promise<TestDatabase> {
  const configured = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
  const server = configured ? { url: configured, stop: async () => {} } : await startThrowawayServer();
  const created: string[] = [];
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: server.url });
    try {
      await client.connect();
    } catch (error) {
      throw new Error(
        `cannot reach the Postgres server for tests at ${redact(server.url)}` +
          ` (from ${configured ? "TEST_DATABASE_URL/DATABASE_URL" : "the throwaway server"}): ${String(error)}`,
        { cause: error },
      );
    }
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  const createDatabase = async (create: CreateOptions = {}) => {
    const name = `agentry_test_${randomBytes(6).toString("hex")}`;
    // template1 keeps its own encoding and collation: a copy of it takes no locale options.
    const attempts = create.template === "template1" ? ["TEMPLATE template1"] : CREATE_OPTIONS;
    await admin(async (client) => {
      let lastError: unknown;
      for (const options of attempts) {
        try {
          await client.query(`CREATE DATABASE ${name} ${options}`);
          return;
        } catch (error) {
          lastError = error;
        }
      }
      throw new Error(`cannot create a test database on ${redact(server.url)}: ${String(lastError)}`, {
        cause: lastError,
      });
    });
    created.push(name);
    return withDatabase(server.url, name);
  };
  try {
    const url = await createDatabase();
    return {
      url,
      createDatabase,
      async close() {
        try {
          await admin(async (client) => {
            for (const name of created.splice(0)) await dropDatabase(client, name);
          });
        } finally {
          await server.stop();
        }
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/**
 * Drops a test database, ending its sessions. A session of another role (a privilege test's) that its client has
 * just closed may outlive the close by a moment, and ending it needs rights over that role: such a drop is
 * tried again until the session is gone.
 */
async function dropDatabase(client: pg.Client, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== "42501" || attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** The server URL with its database replaced by `name`. */
export function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unparsable URL)";
  }
}

const MISSING_POSTGRES =
  "Postgres tests need a server. Set TEST_DATABASE_URL=postgres://USER:PASSWORD@HOST:PORT/DB (a role with " +
  "CREATEDB and CREATEROLE), or install PostgreSQL (apt-get install postgresql) so that initdb and pg_ctl " +
  "can be found (searched: PG_BIN, PATH, /usr/lib/postgresql/*/bin)";

/** The directory holding initdb and pg_ctl: PG_BIN, then PATH, then Debian's versioned directories, newest first. */
function findBinDir(): string {
  const debian = existsSync("/usr/lib/postgresql")
    ? readdirSync("/usr/lib/postgresql")
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
        .map((v) => `/usr/lib/postgresql/${v}/bin`)
    : [];
  const candidates = [process.env.PG_BIN, ...(process.env.PATH ?? "").split(delimiter), ...debian];
  for (const dir of candidates) {
    if (dir && existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) return dir;
  }
  throw new Error(MISSING_POSTGRES);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

/**
 * initdb and pg_ctl refuse to run as root, so as root they run as the `postgres` user (which the postgresql
 * package creates) on a directory it owns.
 */
function runAs(dir: string): (command: string, args: string[]) => [string, string[]] {
  if (process.getuid?.() !== 0) return (command, args) => [command, args];
  let ids: [number, number];
  try {
    ids = [
      Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" })),
      Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" })),
    ];
  } catch {
    throw new Error(`${MISSING_POSTGRES}; running as root also needs the postgres user to run them as`);
  }
  chownSync(dir, ids[0], ids[1]);
  return (command, args) => ["runuser", ["-u", "postgres", "--", command, ...args]];
}

/**
 * A Postgres server of the test's own, which the test may restart and stop: for fault-injection tests, which
 * cannot use a shared server. Its superuser is `postgres`, without a password.
 */
export interface TestPostgresServer {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`; the port stays the same across restarts. */
  readonly url: string;
  /** `pg_ctl restart -m MODE`: `fast` ends every session with 57P01, as a managed Postgres does in maintenance. */
  restart(mode?: "smart" | "fast" | "immediate"): Promise<void>;
  /** `pg_ctl stop -m MODE`: the server is down until `start`. */
  stop(mode?: "smart" | "fast" | "immediate"): Promise<void>;
  /** Starts it again after `stop`, on the same port and data. */
  start(): Promise<void>;
  /** Stops it for good and removes its files. */
  destroy(): Promise<void>;
}

/** Starts a throwaway server from the local binaries. Durability settings are off: the data dies with the test. */
export async function startTestPostgres(): Promise<TestPostgresServer> {
  const bin = findBinDir();
  const dir = mkdtempSync(join(tmpdir(), "agentry-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const cleanup = () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  try {
    const as = runAs(dir);
    const run = (tool: string, args: string[]) => execFileAsync(...as(join(bin, tool), args));
    await run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "-N"]);
    let port = 0;
    const settings = () =>
      [
        `-p ${port}`,
        `-k ${dir}`,
        "-c listen_addresses=127.0.0.1",
        "-c fsync=off",
        "-c synchronous_commit=off",
        "-c full_page_writes=off",
        "-c shared_buffers=32MB",
        "-c max_connections=300",
      ].join(" ");
    const failure = (what: string, error: unknown) => {
      const tail = existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : "";
      return new Error(`the throwaway Postgres server did not ${what}: ${String(error)}\n${tail}`, {
        cause: error,
      });
    };
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await run("pg_ctl", ["-D", data, "-l", log, "-w", "-t", "30", "-o", settings(), "start"]);
        break;
      } catch (error) {
        // Another process may have taken the port between the probe and the start.
        if (attempt >= 3) throw failure("start", error);
      }
    }
    const stopArgs = (mode: string) => ["-D", data, "-m", mode, "-w", "stop"];
    // A test process that ends without calling destroy still takes its server down with it.
    const onExit = () => {
      const [command, args] = as(join(bin, "pg_ctl"), stopArgs("immediate"));
      spawnSync(command, args, { stdio: "ignore" });
      cleanup();
    };
    process.once("exit", onExit);
    let running = true;
    let destroyed = false;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      async restart(mode = "fast") {
        await run("pg_ctl", [
          "-D",
          data,
          "-l",
          log,
          "-w",
          "-t",
          "30",
          "-m",
          mode,
          "-o",
          settings(),
          "restart",
        ]);
        running = true;
      },
      async stop(mode = "fast") {
        if (!running) return;
        await run("pg_ctl", stopArgs(mode));
        running = false;
      },
      async start() {
        if (running) return;
        try {
          await run("pg_ctl", ["-D", data, "-l", log, "-w", "-t", "30", "-o", settings(), "start"]);
        } catch (error) {
          throw failure("start again", error);
        }
        running = true;
      },
      async destroy() {
        if (destroyed) return;
        destroyed = true;
        process.removeListener("exit", onExit);
        try {
          if (running) await run("pg_ctl", stopArgs("immediate"));
        } finally {
          cleanup();
        }
      },
    };
  } catch (error) {
    cleanup();
    throw error;
  }
}

async function startThrowawayServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = await startTestPostgres();
  return { url: server.url, stop: () => server.destroy() };
}
