/**
 * `value` and everything in it made read-only, for a value that a cache hands to every reader: a reader that
 * tried to change it would change every later read, so the attempt throws instead (modules run in strict mode).
 */
export function deepFrozen<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFrozen(member);
    Object.freeze(value);
  }
  return value;
}
