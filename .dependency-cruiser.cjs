/**
 * The walls of the repository, as rules: the direction of imports is the architecture (see README, "Layout").
 * `pnpm lint` runs them; an import across a wall fails with the rule's name and its comment.
 *
 *   apps, tools → services → plugins → packages;  services never import each other;  packages import only
 *   packages; a plugin imports only packages (the plugin kit above all), never another plugin (but
 *   plugins/builtin, the one list of them);
 *   sdks import nothing of the repository.
 */
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
      name: "nothing-imports-tools-test-code",
      comment: "Tests and test helpers of one workspace package are not another's library.",
      severity: "error",
      from: { path: "^(packages|services|apps)/" },
      to: { path: "^tools/" },
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
        "A cycle of imports that run makes the order of initialisation depend on which module is loaded first. " +
        "Type-only imports vanish at run time and may go both ways.",
      severity: "error",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist|src/gen|\\.venv|\\.turbo)/" },
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
