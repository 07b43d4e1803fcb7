import { silentLogger } from "@agentry/logging";
import { ensureModel, sharedModelDir } from "../src/index.js";

/**
 * The real default model, from the per-machine cache that CI fills with `pnpm models:pull --dir` before the
 * tests; fetched into it on a machine that does not have it yet.
 */
export async function testModelPath(): Promise<string> {
  const model = await ensureModel({ dir: sharedModelDir() }, { logger: silentLogger() });
  return model.path;
}

/** A prompt that a small model answers at length, for tests that need a generation still running. */
export const LONG_ANSWER =
  "Write a very long story about a dragon who learns to bake bread. Use many details.";
