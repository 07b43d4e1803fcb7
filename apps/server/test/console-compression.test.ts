import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "./harness.js";

let h: Harness;
let consoleDir: string;
const SCRIPT = `console.log(${JSON.stringify("compressible ".repeat(200))});`;
const PAGE = `<!doctype html><title>console</title>${"<!-- padding -->".repeat(50)}`;

beforeAll(async () => {
  consoleDir = await mkdtemp(join(tmpdir(), "agentry-console-encoding-"));
  await mkdir(join(consoleDir, "assets"));
  // As the console's build writes them: the plain file with its gzip and brotli copies beside it.
  for (const [name, body] of [
    ["index.html", PAGE],
    ["assets/main-abc123.js", SCRIPT],
  ] as const) {
    await writeFile(join(consoleDir, name), body);
    await writeFile(join(consoleDir, `${name}.gz`), gzipSync(body));
    await writeFile(join(consoleDir, `${name}.br`), brotliCompressSync(body));
  }
  await writeFile(join(consoleDir, "assets", "plain-abc123.css"), "body{}");
  h = await startHarness({ CONSOLE_DIR: consoleDir });
});
afterAll(async () => {
  await h.close();
  await rm(consoleDir, { recursive: true, force: true });
});

/** A GET with exactly this Accept-Encoding (fetch would add its own and decode the body). */
function get(path: string, acceptEncoding?: string) {
  return new Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  }>((resolve, reject) => {
    const req = request(
      `${h.url}${path}`,
      { headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("the console's files, compressed", () => {
  it("sends the brotli copy to a client that accepts it, with Content-Encoding and Vary", async () => {
    const res = await get("/console/assets/main-abc123.js", "gzip, deflate, br, zstd");
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("br");
    expect(res.headers.vary).toMatch(/accept-encoding/i);
    expect(res.headers["content-type"]).toMatch(/^text\/javascript/);
    expect(res.headers["cache-control"]).toContain("immutable");
    expect(brotliDecompressSync(res.body).toString()).toBe(SCRIPT);
  });

  it("sends the gzip copy when brotli is not accepted or is refused with q=0", async () => {
    for (const header of ["gzip", "br;q=0, gzip;q=0.5", "*, br;q=0"]) {
      const res = await get("/console/assets/main-abc123.js", header);
      expect(res.headers["content-encoding"], header).toBe("gzip");
      expect(gunzipSync(res.body).toString()).toBe(SCRIPT);
    }
  });

  it("sends the plain file, still varying by Accept-Encoding, to a client that accepts neither", async () => {
    for (const header of [undefined, "identity", "deflate", "gzip;q=0, br;q=0"]) {
      const res = await get("/console/assets/main-abc123.js", header);
      expect(res.status).toBe(200);
      expect(res.headers["content-encoding"], String(header)).toBeUndefined();
      expect(res.headers.vary).toMatch(/accept-encoding/i);
      expect(res.body.toString()).toBe(SCRIPT);
    }
  });

  it("compresses the single page too, keeping its security headers", async () => {
    const res = await get("/console/agents", "br");
    expect(res.headers["content-encoding"]).toBe("br");
    expect(res.headers["content-security-policy"]).toContain("default-src 'self'");
    expect(brotliDecompressSync(res.body).toString()).toBe(PAGE);
  });

  it("sends a file the build left uncompressed as it is", async () => {
    const res = await get("/console/assets/plain-abc123.css", "gzip, br");
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.body.toString()).toBe("body{}");
  });
});
