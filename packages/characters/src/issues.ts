import type { z } from "zod";
import { fieldPath } from "./text.js";

/** One problem with one field, as the error envelope's `details` hold them. */
export interface FieldIssue {
  field: string;
  issue: string;
}

type Issue = z.core.$ZodIssue;

/**
 * The branch of a failed union that the value was meant for: the only one whose problems are not a wrong type
 * of the value itself. A bio of strings with one number in it is then reported at `bio[3]`, not as "bio must be a
 * string or an array". Null when no branch, or more than one, fits that well.
 */
function intendedBranch(issue: Extract<Issue, { code: "invalid_union" }>): Issue[] | null {
  const fitting = issue.errors.filter(
    (branch) => !branch.some((inner) => inner.path.length === 0 && inner.code === "invalid_type"),
  );
  return fitting.length === 1 ? fitting[0]! : null;
}

function collect(issues: readonly Issue[], base: readonly PropertyKey[], out: FieldIssue[]): void {
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) out.push({ field: fieldPath([...path, key]), issue: "unknown field" });
      continue;
    }
    if (issue.code === "invalid_union") {
      const branch = intendedBranch(issue);
      if (branch) {
        collect(branch, path, out);
        continue;
      }
    }
    out.push({ field: fieldPath(path) || "body", issue: issue.message });
  }
}

/** Every problem of a failed parse, one detail each, named by its JSON path. */
export function toFieldIssues(error: z.ZodError): FieldIssue[] {
  const out: FieldIssue[] = [];
  collect(error.issues, [], out);
  return out;
}
