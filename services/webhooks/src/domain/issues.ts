import { AppError, type FieldIssue } from "@agentry/errors";

/** A refusal of a request, naming every field at fault. */
export function invalidRequest(issues: FieldIssue[]): AppError {
  const [first] = issues;
  const message =
    issues.length === 1 && first ? `${first.field} ${first.issue}.` : "The request is invalid; see details.";
  return new AppError("INVALID_REQUEST", message, { details: issues });
}

export function invalid(field: string, issue: string): AppError {
  return invalidRequest([{ field, issue }]);
}
