/// <reference path="./swagger-ui-dist.d.ts" />
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AppError } from "@agentry/errors";
import type { Router } from "@koa/router";
import rendererDir from "swagger-ui-dist/absolute-path.js";
import type { GatewayState } from "../context.js";
import type { ServedProviders } from "../providers.js";
import {
  DOCS_ASSET_PATH,
  DOCS_ASSETS,
  DOCS_PATH,
  OPENAPI_JSON_PATH,
  type OpenApiDocument,
  openApiPath,
} from "./document.js";

/**
 * The renderer's files, from the installed `swagger-ui-dist` package: no CDN, so the page works offline. Found
 * by the package itself (an import, which a bundle keeps pointing at the package, wherever the bundle runs from),
 * not by resolving its name from this module, which fails from the bundle of a deployable that does not depend on
 * it (apps/server).
 */
const RENDERER_DIR = rendererDir();

const DOCS_TITLE = "Agentry API reference";

const assetUrl = (file: string) => openApiPath(DOCS_ASSET_PATH).replace("{file}", file);

function docsPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${assetUrl("swagger-ui.css")}">
</head>
<body>
<div id="reference"></div>
<script src="${assetUrl("swagger-ui-bundle.js")}"></script>
<script>
SwaggerUIBundle({
  url: "${OPENAPI_JSON_PATH}",
  dom_id: "#reference",
  deepLinking: true,
  validatorUrl: null,
  defaultModelsExpandDepth: 0,
  persistAuthorization: false,
});
</script>
</body>
</html>
`;
}

/**
 * Serves the document, the reference page and the page's files, all without authentication. The document is
 * this deployment's (see `buildOpenApiDocument`'s `providers`), built on first request, so starting a gateway
 * does not pay for it, and again only when what the deployment serves has changed.
 */
export function docsRoutes(
  router: Router<GatewayState>,
  providers: () => Promise<ServedProviders | undefined>,
  build: (providers: ServedProviders | undefined) => OpenApiDocument,
): void {
  let built: { key: string; json: string } | undefined;
  let page: string | undefined;
  const assets = new Map<string, Buffer>();

  router.get(OPENAPI_JSON_PATH, async (ctx) => {
    const served = await providers();
    const key = JSON.stringify(served ?? null);
    if (built?.key !== key) built = { key, json: JSON.stringify(build(served)) };
    ctx.type = "application/json; charset=utf-8";
    ctx.body = built.json;
  });
  router.get(DOCS_PATH, (ctx) => {
    page ??= docsPage(DOCS_TITLE);
    ctx.type = "text/html; charset=utf-8";
    ctx.body = page;
  });
  router.get(DOCS_ASSET_PATH, (ctx) => {
    const file = ctx.params.file ?? "";
    const type = Object.hasOwn(DOCS_ASSETS, file) ? DOCS_ASSETS[file] : undefined;
    if (!type) throw new AppError("NOT_FOUND", `No route ${ctx.method} ${ctx.path}.`);
    let content = assets.get(file);
    if (!content) {
      content = readFileSync(join(RENDERER_DIR, file));
      assets.set(file, content);
    }
    ctx.type = type;
    ctx.set("Cache-Control", "public, max-age=86400");
    ctx.body = content;
  });
}
