import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";

/** The build `pnpm test` makes first (turbo: test depends on build). */
const DIST = resolve(import.meta.dirname, "../dist");
const BUDGET_BYTES = 250 * 1024;

describe("the console's build", () => {
  it("keeps all of its JavaScript within 250 KB gzipped", async () => {
    const assets = await readdir(join(DIST, "assets"));
    const scripts = assets.filter((name) => name.endsWith(".js"));
    expect(scripts.length).toBeGreaterThan(0);
    let total = 0;
    for (const name of scripts) total += gzipSync(await readFile(join(DIST, "assets", name))).length;
    expect(total).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it("loads nothing from another origin and has no inline script, as the page's CSP requires", async () => {
    const html = await readFile(join(DIST, "index.html"), "utf8");
    expect(html).not.toMatch(/(src|href)="https?:/);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });
});
