/**
 * The platforms an agent's `clients` may name that the connectors service runs (docs/api/connectors.md,
 * "Clients"); any other name is kept, inert.
 */
export const RUN_PLATFORMS = ["telegram", "discord", "slack"] as const;
export type Platform = (typeof RUN_PLATFORMS)[number];

export const isPlatform = (name: unknown): name is Platform =>
  typeof name === "string" && (RUN_PLATFORMS as readonly string[]).includes(name);

/** The agent secrets each platform needs before its connector can run. */
export const PLATFORM_SECRETS: Record<Platform, readonly string[]> = {
  telegram: ["TELEGRAM_BOT_TOKEN"],
  discord: ["DISCORD_BOT_TOKEN"],
  slack: ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"],
};

/** The platform name of one `clients` item: the name itself or its `type`. */
function clientType(item: unknown): unknown {
  if (typeof item === "string") return item;
  return item !== null && typeof item === "object" ? (item as Record<string, unknown>).type : undefined;
}

/** The platform names an agent's `clients` lists, in order, once each: a name or `{type, ...config}`. */
export function clientTypes(clients: unknown): string[] {
  if (!Array.isArray(clients)) return [];
  const types: string[] = [];
  for (const item of clients) {
    const type = clientType(item);
    if (typeof type === "string" && !types.includes(type)) types.push(type);
  }
  return types;
}

/** Whether an agent's `clients` names a platform the service runs, so that its secrets bear on the warnings. */
export const namesRunPlatform = (clients: unknown): boolean => clientTypes(clients).some(isPlatform);

const RUN_PLATFORM_LIST = `${RUN_PLATFORMS.slice(0, -1).join(", ")} and ${RUN_PLATFORMS.at(-1)}`;

/**
 * The warnings of an agent write for `clients` items that will not connect (docs/api/connectors.md, "Clients"):
 * a platform no connector runs, which is kept, inert, and a run platform whose agent secrets are missing. The
 * secrets are the names the agent has set; `undefined` when they are not known, and then only the first kind is
 * warned of. `field` is the path of `clients` in what was sent (`clients`, or a character file's own path).
 */
export function clientWarnings(
  clients: unknown,
  secretNames: ReadonlySet<string> | undefined,
  field = "clients",
): { field: string; issue: string }[] {
  if (!Array.isArray(clients)) return [];
  const warnings: { field: string; issue: string }[] = [];
  clients.forEach((item, i) => {
    const type = clientType(item);
    if (typeof type !== "string") return;
    if (!isPlatform(type)) {
      warnings.push({
        field: `${field}[${i}]`,
        issue: `${JSON.stringify(type)} is kept but not run by this server: only ${RUN_PLATFORM_LIST} are; it is listed as inert and receives no messages. Remove it, or name one of those platforms`,
      });
      return;
    }
    if (secretNames === undefined) return;
    const missing = PLATFORM_SECRETS[type].filter((name) => !secretNames.has(name));
    if (missing.length === 0) return;
    const set =
      missing.length === 1
        ? `the agent secret ${missing[0]} (PUT /v1/agents/{agentId}/secrets/${missing[0]})`
        : `the agent secrets ${missing.join(" and ")} (PUT /v1/agents/{agentId}/secrets/{name}, once each)`;
    warnings.push({
      field: `${field}[${i}]`,
      issue: `${type} is kept but not connected until the agent has its secrets: set ${set} to connect it`,
    });
  });
  return warnings;
}
