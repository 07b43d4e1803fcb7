import type { JsonObject } from "./json.js";

/*
 * The file and folder references of an imported character's `knowledge` (kept in `personality.knowledgeSources`)
 * and which of them the agent's documents answer (docs/api/documents.md, "Characters' knowledge files").
 */

/**
 * The file and folder references of an imported character (`personality.knowledgeSources`: `{path}` or
 * `{directory}`, itself a path or `{path}`), as the paths an upload's `source` names.
 */
export function knowledgeReferences(
  personality: JsonObject | undefined,
): { path: string; folder: boolean }[] {
  const sources = personality?.knowledgeSources;
  if (!Array.isArray(sources)) return [];
  const references: { path: string; folder: boolean }[] = [];
  for (const entry of sources) {
    const source = (entry as { source?: unknown } | null)?.source as
      | { path?: unknown; directory?: unknown }
      | undefined;
    if (typeof source?.path === "string") references.push({ path: source.path, folder: false });
    const directory = source?.directory;
    const folder = typeof directory === "string" ? directory : (directory as { path?: unknown } | null)?.path;
    if (typeof folder === "string") references.push({ path: folder, folder: true });
  }
  return references;
}

/**
 * The references no document answers yet: a file's, until a document was uploaded with its path as `source`; a
 * folder's, until one was uploaded with a path inside it.
 */
export function missingSources(personality: JsonObject | undefined, sources: readonly string[]): string[] {
  return knowledgeReferences(personality)
    .filter(({ path, folder }) => {
      const prefix = `${path.replace(/\/+$/, "")}/`;
      return !sources.some((source) => (folder ? source.startsWith(prefix) : source === path));
    })
    .map(({ path }) => path);
}
