import { AppError, type FieldIssue } from "./app-error.js";

/**
 * The INVALID_REQUEST refusals, worded once. Every one names its fields in `details`; the message says what to fix
 * in a line.
 */

/** One field at fault: `field issue.`, e.g. `limit must be from 1 to 100.` */
export function invalid(field: string, issue: string): AppError {
  return new AppError("INVALID_REQUEST", `${field} ${issue}.`, { details: [{ field, issue }] });
}

/** Every field at fault: the one as `invalid` words it, several pointed to in `details`. */
export function invalidRequest(issues: FieldIssue[]): AppError {
  const [first] = issues;
  const message =
    issues.length === 1 && first ? `${first.field} ${first.issue}.` : "The request is invalid; see details.";
  return new AppError("INVALID_REQUEST", message, { details: issues });
}

/** Every field of `what` (a request body, a character file) at fault, the first in the message: `Invalid body: a: b (and 2 more).` */
export function invalidInput(what: string, details: FieldIssue[]): AppError {
  const first = details[0];
  const summary = first ? `${first.field}: ${first.issue}` : "invalid";
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : "";
  return new AppError("INVALID_REQUEST", `Invalid ${what}: ${summary}${more}.`, { details });
}

/** Every field of `what` at fault, each in the message: `Invalid request body: a b; c d.` */
export function invalidInputListing(what: string, details: FieldIssue[]): AppError {
  const summary = details.map((detail) => `${detail.field} ${detail.issue}`).join("; ");
  return new AppError("INVALID_REQUEST", `Invalid ${what}: ${summary}.`, { details });
}
