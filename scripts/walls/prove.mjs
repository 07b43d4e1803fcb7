#!/usr/bin/env node
/**
 * Shows that every wall of `.dependency-cruiser.cjs` stands: cruises `fixture/`, a small tree laid out like the
 * repository whose files each break one rule (a file is named after the rule it breaks) or do what a rule allows,
 * and fails unless exactly the expected violations are reported. A rule that matches nothing, or a rule edited so
 * that it no longer catches its case (or catches an allowed one), fails `pnpm lint:walls` here.
 */
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { cruise } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";

const root = fileURLToPath(new URL("../..", import.meta.url));
const fixture = fileURLToPath(new URL("fixture", import.meta.url));

/** `rule  from → to`, for each violation the fixture must produce; npm packages are named `npm:<name>`. */
const EXPECTED = [
  "services-are-independent  services/billing/src/services-are-independent.ts → services/mail/src/index.ts",
  "services-do-not-import-apps-or-tools  services/billing/src/services-do-not-import-apps-or-tools.ts → apps/web/src/index.ts",
  "packages-import-only-packages  packages/lib/src/packages-import-only-packages.ts → services/billing/src/index.ts",
  "plugins-import-only-packages  plugins/clock/src/plugins-import-only-packages.ts → plugins/dice/src/index.ts",
  "only-the-builtin-list-gathers-plugins  plugins/builtin/src/only-the-builtin-list-gathers-plugins.ts → services/billing/src/index.ts",
  "apps-do-not-import-tools  apps/web/src/apps-do-not-import-tools.ts → tools/bench/index.ts",
  "apps-are-independent  apps/web/src/apps-are-independent.ts → apps/cli/src/index.ts",
  "sdks-are-standalone  sdks/client/src/sdks-are-standalone.ts → packages/lib/src/index.ts",
  "production-code-imports-no-test-helpers  services/billing/src/production-code-imports-no-test-helpers.ts → packages/testing/src/index.ts",
  "production-code-imports-no-test-helpers  services/mail/src/production-code-imports-no-test-helpers.ts → services/mail/src/testing/index.ts",
  "production-code-imports-no-dev-dependencies  packages/lib/src/production-code-imports-no-dev-dependencies.ts → npm:vitest",
  "declared-dependencies-only  packages/lib/src/declared-dependencies-only.ts → ./nowhere.js",
  "no-undeclared-npm-packages  packages/lib/src/no-undeclared-npm-packages.ts → npm:esbuild",
  "no-circular  packages/lib/src/no-circular-a.ts → packages/lib/src/no-circular-b.ts",
  "no-circular-through-types  packages/lib/src/no-circular-through-types-a.ts → packages/lib/src/no-circular-through-types-b.ts",
];

/** A resolved path inside any node_modules folder, as the package it belongs to. */
function named(path) {
  const inModules = /(?:^|\/)node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?(@[^/]+\/[^/]+|[^/]+)/.exec(
    path,
  );
  return inModules ? `npm:${inModules[1]}` : path;
}

const options = await extractDepcruiseOptions(join(root, ".dependency-cruiser.cjs"));
options.tsConfig.fileName = join(root, options.tsConfig.fileName);
const tsConfig = extractTSConfig(options.tsConfig.fileName);
// Paths in the fixture read as they would at the root of the repository, so the rules' paths apply unchanged.
process.chdir(fixture);
const { output } = await cruise(
  ["apps", "packages", "plugins", "services", "sdks", "tools"],
  options,
  {},
  { tsConfig },
);

const reported = output.summary.violations.map(
  (violation) => `${violation.rule.name}  ${violation.from} → ${named(violation.to)}`,
);
const missing = EXPECTED.filter((line) => !reported.includes(line));
const unexpected = reported.filter((line) => !EXPECTED.includes(line));
const rules = options.ruleSet.forbidden.map((rule) => rule.name);
const unproven = rules.filter((name) => !EXPECTED.some((line) => line.startsWith(`${name}  `)));

for (const line of missing) console.error(`✘ not reported: ${line}`);
for (const line of unexpected) console.error(`✘ reported, not expected: ${line}`);
for (const name of unproven) console.error(`✘ rule ${name} has no case in ${relative(root, fixture)}/`);
if (missing.length + unexpected.length + unproven.length > 0) {
  console.error("The walls do not check what they claim (see scripts/walls/prove.mjs).");
  process.exit(1);
}
console.log(`✔ each of the ${rules.length} walls stops the import that breaks it, and only that`);
