import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Scenario, ScenarioRun } from "./conformance/runner.js";
import { type SpawnedLauncher, spawnLauncher } from "./conformance/spawn.js";

const scenario = JSON.parse(
  readFileSync(new URL("../../../tools/conformance/scenario.json", import.meta.url), "utf8"),
) as Scenario;

let launcher: SpawnedLauncher;
let run: ScenarioRun;
let failed: string | undefined;

beforeAll(async () => {
  launcher = await spawnLauncher();
  run = new ScenarioRun(scenario, launcher.info);
}, 120_000);
afterAll(async () => {
  await launcher?.stop();
});

describe("the conformance scenario against a live service", () => {
  it("the launcher names the scenario it serves and every key the scenario uses", () => {
    expect(launcher.info.scenario).toBe(
      new URL("../../../tools/conformance/scenario.json", import.meta.url).pathname,
    );
    for (const client of Object.values(scenario.clients)) {
      if (client.key !== undefined) expect(launcher.info.keys[client.key]).toMatch(/^agentry_sk_/);
    }
  });

  // Steps build on each other, so they run in order and a failure stops the ones after it.
  for (const step of scenario.steps) {
    it(step.name, async () => {
      if (failed) throw new Error(`not run: the earlier step "${failed}" failed`);
      try {
        await run.step(step);
      } catch (error) {
        failed = step.name;
        throw error;
      }
    });
  }
});
