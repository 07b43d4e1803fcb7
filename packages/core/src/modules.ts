/**
 * The exports of a CommonJS package loaded with `import()`: Node gives them as named exports (and as `default`),
 * a bundle (`pnpm build`) only as `default`. Packages loaded on demand (the tracing SDK, the Redis client) read
 * their exports through this, so the sources and the bundles behave alike.
 */
export function commonJsExports<T extends object>(module: T): T {
  const whole = (module as { default?: unknown }).default;
  return whole !== null && typeof whole === "object" ? (whole as T) : module;
}
