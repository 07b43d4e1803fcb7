/** JSON values as a character file and an agent hold them. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * An object with these entries. Built with `Object.fromEntries`, so a key such as `__proto__` (which `JSON.parse`
 * makes an ordinary key) stays an ordinary key instead of replacing the object's prototype.
 */
export function objectOf(entries: Iterable<readonly [string, JsonValue]>): JsonObject {
  return Object.fromEntries(entries) as JsonObject;
}

/** The object without these keys. */
export function omitKeys(object: JsonObject, keys: readonly string[]): JsonObject {
  return objectOf(Object.entries(object).filter(([key]) => !keys.includes(key)));
}

/** Whether two JSON values are equal; the order of object keys does not count, as it does not in JSON. */
export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]!));
  }
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key]!, b[key]!));
}

/** Blank text, an empty list, or an object of nothing but such values: a field that says nothing. */
export function isEmptyValue(value: JsonValue): boolean {
  if (value === null) return true;
  if (typeof value === "string") return value.trim() === "";
  if (Array.isArray(value)) return value.length === 0;
  if (isJsonObject(value)) return Object.values(value).every(isEmptyValue);
  return false;
}
