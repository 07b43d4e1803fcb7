import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { drift, emitFiles, GENERATE_COMMAND, loadEmitters, writeFiles } from "../src/emitter.js";
import { loadModel, SDKS_DIR } from "../src/model.js";

const model = loadModel();
const emitters = await loadEmitters();
const scratch = mkdtempSync(join(tmpdir(), "agentry-sdk-generator-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("generated SDK files", () => {
  it.each(emitters.map((emitter) => [emitter.language, emitter] as const))(
    "%s: regenerating gives the committed files",
    (_language, emitter) => {
      const files = emitFiles(emitter, model);
      expect(files.length).toBeGreaterThan(0);
      // Written to a scratch tree first, so a write that does not round-trip (encoding, newlines) is caught too.
      writeFiles(scratch, emitter, files);
      expect(drift(scratch, emitter, files)).toEqual([]);
      const problems = drift(SDKS_DIR, emitter, files);
      expect(problems, `generated files are out of date; run ${GENERATE_COMMAND}`).toEqual([]);
    },
  );

  it("emitting twice gives the same bytes", () => {
    for (const emitter of emitters) {
      expect(emitFiles(emitter, loadModel())).toEqual(emitFiles(emitter, model));
    }
  });
});
