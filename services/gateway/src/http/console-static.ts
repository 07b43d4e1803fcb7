import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import { AppError } from "@agentry/errors";
import type { Router } from "@koa/router";
import type { ParameterizedContext } from "koa";
import type { GatewayState } from "../context.js";

/** Where the console is served. */
export const CONSOLE_PATH = "/console";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
};

/**
 * The console's pages may load only their own files and speak only to this origin; no page may frame them, and
 * no address (a sign-in link's included) leaves in a Referer.
 */
const PAGE_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
};

/**
 * Serves the console's built files from `dir` (the composition root passes it; nothing of the console's source is
 * imported). Files under `assets/` carry a content hash in their names and are cached for good; any other path
 * under /console is the single page, which routes in the browser. Without a build, /console says how to make one.
 */
export function consoleRoutes(router: Router<GatewayState>, dir: string | undefined): void {
  // The router takes /console and /console/ for one path; only with the slash do the page's relative links resolve.
  router.get(CONSOLE_PATH, (ctx) => {
    if (!ctx.path.endsWith("/")) return ctx.redirect(`${CONSOLE_PATH}/`);
    return servePage(ctx, dir, "");
  });
  router.get(`${CONSOLE_PATH}/*path`, (ctx) => servePage(ctx, dir, ctx.path.slice(CONSOLE_PATH.length + 1)));
}

async function servePage(ctx: ParameterizedContext<GatewayState>, dir: string | undefined, path: string) {
  if (dir === undefined) throw notBuilt();
  const file = path === "" ? undefined : await servedFile(dir, path);
  if (file) return send(ctx, file, path.startsWith("assets/"));
  if (path.startsWith("assets/") || extname(path) !== "") {
    throw new AppError("NOT_FOUND", `The console has no file ${JSON.stringify(path)}.`);
  }
  const page = join(dir, "index.html");
  const variant = await compressedVariant(ctx, page);
  const index = await readFile(variant?.file ?? page).catch(() => {
    throw notBuilt();
  });
  ctx.set(PAGE_HEADERS);
  ctx.set("Cache-Control", "no-cache");
  ctx.type = TYPES[".html"]!;
  ctx.body = index;
}

function notBuilt(): AppError {
  return new AppError(
    "NOT_FOUND",
    "The web console is not built here: run 'pnpm build' (or 'pnpm install').",
  );
}

/** The file at `path` inside `dir`, or undefined; nothing outside `dir` is ever reached. */
async function servedFile(dir: string, path: string): Promise<string | undefined> {
  const root = normalize(dir + sep);
  const file = normalize(join(root, path));
  if (!file.startsWith(root) || path.includes("\0")) return undefined;
  const stats = await stat(file).catch(() => undefined);
  return stats?.isFile() ? file : undefined;
}

async function send(
  ctx: ParameterizedContext<GatewayState>,
  file: string,
  immutable: boolean,
): Promise<void> {
  const type = TYPES[extname(file)] ?? "application/octet-stream";
  const variant = await compressedVariant(ctx, file);
  if (type.startsWith("text/html")) ctx.set(PAGE_HEADERS);
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("Cache-Control", immutable ? "public, max-age=31536000, immutable" : "no-cache");
  ctx.type = type;
  ctx.body = createReadStream(variant?.file ?? file);
}

/** The encodings the build writes beside a file (`main.js.br`, `main.js.gz`), the smallest first. */
const ENCODINGS = [
  { name: "br", suffix: ".br" },
  { name: "gzip", suffix: ".gz" },
] as const;

/**
 * The precompressed copy of `file` that the request's Accept-Encoding allows, the smallest first, with
 * `Content-Encoding` set; undefined for the plain file. A file that has copies varies by Accept-Encoding whichever
 * is sent, so that no cache hands a compressed body to a client that cannot read it.
 */
async function compressedVariant(
  ctx: ParameterizedContext<GatewayState>,
  file: string,
): Promise<{ file: string } | undefined> {
  const present = [];
  for (const encoding of ENCODINGS) {
    const stats = await stat(file + encoding.suffix).catch(() => undefined);
    if (stats?.isFile()) present.push(encoding);
  }
  if (present.length === 0) return undefined;
  ctx.vary("Accept-Encoding");
  const accepted = acceptedEncodings(ctx.get("Accept-Encoding"));
  const chosen = present.find((encoding) => accepted(encoding.name));
  if (!chosen) return undefined;
  ctx.set("Content-Encoding", chosen.name);
  return { file: file + chosen.suffix };
}

/** Whether an Accept-Encoding header allows an encoding: named or `*`, with a quality above 0. */
function acceptedEncodings(header: string): (encoding: string) => boolean {
  const qualities = new Map<string, number>();
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    const q = params.map((param) => /^\s*q=([0-9.]+)\s*$/.exec(param)?.[1]).find((v) => v !== undefined);
    qualities.set(name, q === undefined ? 1 : Number(q));
  }
  return (encoding) => (qualities.get(encoding) ?? qualities.get("*") ?? 0) > 0;
}
