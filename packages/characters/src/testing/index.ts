import { readdirSync, readFileSync } from "node:fs";
import { isJsonObject, type JsonObject } from "../json.js";

/** Character files written for the tests, of both generations, each importable. */
export interface CorpusFile {
  /** The file's name, `v0-…` or `v1-…` by generation. */
  file: string;
  content: JsonObject;
}

const DIR = new URL("./corpus/", import.meta.url);

export const CHARACTER_CORPUS: readonly CorpusFile[] = readdirSync(DIR)
  .filter((file) => file.endsWith(".json"))
  .sort()
  .map((file) => ({ file, content: JSON.parse(readFileSync(new URL(file, DIR), "utf8")) as JsonObject }));

/** One corpus file by name. */
export function corpusFile(file: string): JsonObject {
  const found = CHARACTER_CORPUS.find((entry) => entry.file === file);
  if (!found) throw new Error(`no corpus file ${file}`);
  return structuredClone(found.content);
}

/**
 * The secret texts a file holds (`settings.secrets`, `secrets`), to look for where none may appear. Numbers and
 * flags are left out: `3` or `false` turn up in any JSON.
 */
export function secretValues(content: JsonObject): string[] {
  const settings = isJsonObject(content.settings) ? content.settings : {};
  return [settings.secrets, content.secrets].flatMap((secrets) =>
    isJsonObject(secrets)
      ? Object.values(secrets).filter(
          (value): value is string => typeof value === "string" && value.length >= 8,
        )
      : [],
  );
}
