/**
 * The platforms an agent's `clients` may name that the connectors service runs (docs/api/connectors.md,
 * "Clients"); any other name is kept, inert.
 */
export const RUN_PLATFORMS = ["telegram", "discord", "slack"] as const;
export type Platform = (typeof RUN_PLATFORMS)[number];

export const isPlatform = (name: unknown): name is Platform =>
  typeof name === "string" && (RUN_PLATFORMS as readonly string[]).includes(name);

/** The platform names an agent's `clients` lists, in order, once each: a name or `{type, ...config}`. */
export function clientTypes(clients: unknown): string[] {
  if (!Array.isArray(clients)) return [];
  const types: string[] = [];
  for (const item of clients) {
    const type =
      typeof item === "string"
        ? item
        : item !== null && typeof item === "object"
          ? (item as Record<string, unknown>).type
          : undefined;
    if (typeof type === "string" && !types.includes(type)) types.push(type);
  }
  return types;
}
