import { AgentryError } from "../errors.js";

/** An id as one URL path segment; an empty one is refused here rather than turned into another route. */
export function idSegment(name: string, value: string): string {
  if (typeof value !== "string" || value === "") {
    throw new AgentryError(`${name} must be a non-empty string.`);
  }
  return encodeURIComponent(value);
}
