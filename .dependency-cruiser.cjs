/**
 * The walls of the repository, as rules: the direction of imports is the architecture (see README, "Layout").
 * `pnpm lint:walls` runs them (and `scripts/walls/prove.mjs`, which shows each rule firing on a tree that breaks
 * it); an import across a wall fails with the rule's name and its comment.
 *
 *   apps, tools → services → plugins → packages;  services never import each other;  packages import only
 *   packages; a plugin imports only packages (the plugin kit above all), never another plugin (but
 *   plugins/builtin, the one list of them);
 *   sdks import nothing of the repository;
 *   every import is declared by the importer's own package.json; production code imports neither test helpers
 *   nor devDependencies.
 */

/**
 * Code that runs only in tests, builds or development: test suites and their fixtures, unit tests beside the code,
 * test helpers (a package's `src/testing/`, the `@agentry/testing*` packages), the console's browser harness,
 * build and development scripts, tool configurations, and tools/ (benchmarks, conformance, system tests). Anything
 * else under apps/, packages/, plugins/, services/ and sdks/ is production code: it is deployed or published.
 */
const NOT_PRODUCTION = [
  "^tools/",
  "(^|/)(test|e2e|scripts)/",
  "\\.test\\.tsx?$",
  "(^|/)[^/]+\\.config\\.ts$",
  "(^|/)src/testing/",
  "^packages/testing(-pg)?/",
];

/** The test helpers: the `@agentry/testing*` packages and every package's `testing` entry points (`src/testing/`). */
const TEST_HELPERS = ["^packages/testing(-pg)?/", "(^|/)src/testing/"];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "services-are-independent",
      comment:
        "A service never imports another service's source: services talk over their RPC contracts (proto/, " +
        "@agentry/proto) and share only packages/. Composing several in one process is the job of apps/server.",
      severity: "error",
      from: { path: "^services/([^/]+)/" },
      to: { path: "^services/", pathNot: "^services/$1/" },
    },
    {
      name: "services-do-not-import-apps-or-tools",
      comment: "Applications and tools compose or exercise services; a service never depends on them.",
      severity: "error",
      from: { path: "^services/" },
      to: { path: "^(apps|tools)/" },
    },
    {
      name: "packages-import-only-packages",
      comment:
        "packages/ are the shared libraries under every service and application; they must not reach up into " +
        "services, applications, tools or SDKs.",
      severity: "error",
      from: { path: "^packages/" },
      to: { path: "^(services|apps|tools|sdks|plugins)/" },
    },
    {
      name: "plugins-import-only-packages",
      comment:
        "A plugin (plugins/*) is built on the plugin kit and the shared packages alone, so any deployable can " +
        "install it; it never reaches into services, applications, tools, SDKs or another plugin.",
      severity: "error",
      from: { path: "^plugins/([^/]+)/", pathNot: "^plugins/builtin/" },
      to: { path: "^(services|apps|tools|sdks|plugins)/", pathNot: "^plugins/$1/" },
    },
    {
      name: "only-the-builtin-list-gathers-plugins",
      comment:
        "plugins/builtin (@agentry/plugins) is the one list of the built-in plugins that the deployables install: " +
        "it alone imports other plugins, and like them it never reaches into services, applications, tools or SDKs.",
      severity: "error",
      from: { path: "^plugins/builtin/" },
      to: { path: "^(services|apps|tools|sdks)/" },
    },
    {
      name: "apps-do-not-import-tools",
      comment: "Tools (benchmarks, conformance, system tests) may use applications, not the other way round.",
      severity: "error",
      from: { path: "^apps/" },
      to: { path: "^tools/" },
    },
    {
      name: "apps-are-independent",
      comment:
        "Each application is a deployable of its own (one composition root each); none imports another.",
      severity: "error",
      from: { path: "^apps/([^/]+)/" },
      to: { path: "^apps/", pathNot: "^apps/$1/" },
    },
    {
      name: "sdks-are-standalone",
      comment:
        "Each SDK is published alone: it imports nothing from the rest of the repository, not even another SDK. " +
        "Its tests reach the service across a process boundary (tools/conformance/serve.ts).",
      severity: "error",
      from: { path: "^sdks/([^/]+)/" },
      to: { path: "^(packages|services|apps|tools|proto|sdks)/", pathNot: "^sdks/$1/" },
    },
    {
      name: "production-code-imports-no-test-helpers",
      comment:
        "Test helpers (@agentry/testing, @agentry/testing-pg, any package's `testing` entry point in src/testing/) " +
        "fake, seed and start things for tests; production code never runs them. Tests, other test helpers, the " +
        "console's browser harness and tools may.",
      severity: "error",
      from: { path: "^(apps|packages|plugins|services|sdks)/", pathNot: NOT_PRODUCTION },
      to: { path: TEST_HELPERS },
    },
    // dependency-cruiser tells an npm package's kind (dependencies or devDependencies) from the importer's
    // package.json; a workspace package (`workspace:*`) resolves to its source and reads as local code, so this
    // rule covers npm packages, and the test-helper rule above covers the workspace's test-only packages.
    {
      name: "production-code-imports-no-dev-dependencies",
      comment:
        "A devDependency is not installed where the package is deployed or published (`pnpm install --prod`), so " +
        "production code that imports one fails there. Importing only its types is fine: they vanish at run time.",
      severity: "error",
      from: { path: "^(apps|packages|plugins|services|sdks)/", pathNot: NOT_PRODUCTION },
      to: { dependencyTypes: ["npm-dev"], dependencyTypesNot: ["type-only"] },
    },
    {
      name: "declared-dependencies-only",
      comment:
        "Every import resolves, and to a package the importer's package.json declares: an undeclared workspace " +
        "package is how a wall is crossed without anyone noticing.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: "no-undeclared-npm-packages",
      comment: "A package that is imported but not in the importer's package.json works only by accident.",
      severity: "error",
      from: {},
      to: { dependencyTypes: ["npm-no-pkg", "npm-unknown"] },
    },
    {
      name: "no-circular",
      comment:
        "A cycle of imports that run makes the order of initialisation depend on which module is loaded first.",
      severity: "error",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    {
      name: "no-circular-through-types",
      comment:
        "A cycle closed by a type-only import vanishes at run time, so it is no error; it still ties the modules " +
        "into one knot (neither can be understood or moved alone), so it is shown, to be undone when it can.",
      severity: "warn",
      from: {},
      to: { circular: true, via: { dependencyTypes: ["type-only"] } },
    },
  ],
  options: {
    // Packages from npm are in the graph, so that the rules above see what is imported from them, but what they
    // import in turn is theirs.
    doNotFollow: { path: "(^|/)node_modules/" },
    // Build output, generated code and caches of the repository's own packages; anchored so that a package from
    // npm with a dist/ folder (most of them) stays in the graph.
    exclude: { path: "^(apps|packages|plugins|services|sdks|tools)/[^/]+/(dist|src/gen|\\.venv|\\.turbo)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json"],
      mainFields: ["main", "types"],
    },
  },
};
