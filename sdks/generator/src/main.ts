/**
 * Regenerates every SDK's generated files from `sdks/openapi.json`:
 * `pnpm --filter @agentry/sdk-generator generate [--check] [--only <language>]`. With `--check` nothing is
 * written and the exit status says whether the committed files are up to date; `--only python` limits the run to
 * one language.
 */
import { drift, emitFiles, GENERATE_COMMAND, loadEmitters, writeFiles } from "./emitter.js";
import { loadModel, SDKS_DIR } from "./model.js";

async function main(args: string[]): Promise<number> {
  // Turbo runs every package's `generate` task after `pnpm install` and before tests. Rewriting the SDKs there
  // would hide exactly the drift the generator's test exists to catch, so under turbo this is a no-op.
  if (process.env.TURBO_HASH !== undefined && !args.includes("--force")) return 0;
  const check = args.includes("--check");
  const model = loadModel();
  const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
  const emitters = (await loadEmitters()).filter((e) => only === undefined || e.language === only);
  if (emitters.length === 0) {
    console.error(only === undefined ? "No emitters in src/." : `No emitter for ${only}.`);
    return 1;
  }
  let problems = 0;
  for (const emitter of emitters) {
    const files = emitFiles(emitter, model);
    if (check) {
      const found = drift(SDKS_DIR, emitter, files);
      for (const line of found) console.error(`${emitter.language}: ${line}`);
      problems += found.length;
    } else {
      writeFiles(SDKS_DIR, emitter, files);
      console.log(`${emitter.language}: ${files.length} files in ${emitter.outputDirs.join(", ")}`);
    }
  }
  if (problems > 0) console.error(`The generated SDK files are out of date: run ${GENERATE_COMMAND}`);
  return problems > 0 ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
