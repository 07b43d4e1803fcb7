import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { ROUTES } from "../app.js";
import { buildOpenApiDocument, DEFAULT_PUBLIC_BASE_URL, type OpenApiDocument } from "./document.js";

/** The committed copy SDK generators read, relative to the repository root. */
export const COMMITTED_DOCUMENT = "sdks/openapi.json";
const REPOSITORY_ROOT = new URL("../../../../", import.meta.url);
export const COMMITTED_DOCUMENT_URL = new URL(COMMITTED_DOCUMENT, REPOSITORY_ROOT);
export const REGENERATE_COMMAND = "pnpm --filter @agentry/gateway openapi";

/** The committed copy's content; its servers name the default public base URL. */
export function committedDocument(): OpenApiDocument {
  return buildOpenApiDocument({ routes: ROUTES, publicBaseUrl: DEFAULT_PUBLIC_BASE_URL });
}

/**
 * The document as the repository's formatter lays it out, keys in the order the code builds them, so that
 * formatting the repository leaves the file alone.
 */
function formatted(document: OpenApiDocument): string {
  const biome = createRequire(import.meta.url).resolve("@biomejs/biome/bin/biome");
  return execFileSync(process.execPath, [biome, "format", `--stdin-file-path=${COMMITTED_DOCUMENT}`], {
    cwd: fileURLToPath(REPOSITORY_ROOT),
    input: JSON.stringify(document, null, 2),
    encoding: "utf8",
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(COMMITTED_DOCUMENT_URL, formatted(committedDocument()));
  console.log(`wrote ${COMMITTED_DOCUMENT}`);
}
