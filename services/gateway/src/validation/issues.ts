import { type FieldIssue, invalidInput } from "@agentry/errors";
import type { z } from "zod";

/** `["bio", 2, "x"]` → `bio[2].x`, the field notation of the error envelope's `details`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** One detail per problem; an unknown key is reported at its own path. */
export function toFieldIssues(error: z.ZodError, root = ""): FieldIssue[] {
  const details: FieldIssue[] = [];
  for (const issue of error.issues) {
    const base = root ? [root, ...issue.path] : issue.path;
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys)
        details.push({ field: fieldPath([...base, key]), issue: "unknown field" });
    } else {
      details.push({ field: fieldPath(base) || "body", issue: issue.message });
    }
  }
  return details;
}

/** Parses input with schema or throws INVALID_REQUEST naming every field problem. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw invalidInput(what, toFieldIssues(result.error));
}
