/** Network errors of the driver: the server could not be reached, or the connection broke. */
const NETWORK_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
]);

/** What node-postgres says, without a code, when a connection breaks or cannot be had in time. */
const CONNECTION_LOST = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error/,
];

/**
 * Whether an error means the database cannot be reached or is overloaded rather than that the request is wrong:
 * callers answer it as a temporary outage (503, retry later) instead of an internal error.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    // 08: connection exception; 53: insufficient resources; 57P0x: shutting down; 57014: statement timeout.
    if (/^(08|53|57P0)/.test(code) || code === "57014" || NETWORK_ERRORS.has(code)) return true;
  }
  return CONNECTION_LOST.some((message) => message.test(error.message));
}
