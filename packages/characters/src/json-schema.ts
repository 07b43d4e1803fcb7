import { z } from "zod";
import type { JsonObject } from "./json.js";
import { characterFile } from "./schema.js";
import { NUL_FREE_PATTERN } from "./text.js";

/**
 * The character file's JSON Schema (draft 2020-12), as `GET /v1/schemas/character.json` publishes it: what an
 * import accepts, the bounds included. Refinements zod cannot state are stated by hand beside them (`if`/`then`
 * for a speaker or a reference target), and every string and key refuses U+0000, as the import does.
 */
export function characterJsonSchema(): JsonObject {
  const schema = z.toJSONSchema(characterFile, {
    target: "draft-2020-12",
    io: "input",
    override: ({ jsonSchema }) => {
      const json = jsonSchema as Record<string, unknown>;
      if (json.type === "string" && json.pattern === undefined && json.enum === undefined) {
        json.pattern = NUL_FREE_PATTERN;
      }
      if (json.type === "object" && json.additionalProperties !== false) {
        json.propertyNames = { pattern: NUL_FREE_PATTERN };
      }
    },
  });
  return schema as JsonObject;
}
