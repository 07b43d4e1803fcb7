/**
 * A map that keeps its most recently used entries within a total size, in whatever unit its caller measures
 * (characters, bytes), dropping the least recently used first. An entry larger than the whole limit is not kept.
 */
export class SizedLru<K, V> {
  private readonly entries = new Map<K, { value: V; size: number }>();
  private used = 0;

  constructor(readonly maxSize: number) {}

  /** The value, which becomes the most recently used. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` as the most recently used (replacing any under `key`), then drops the oldest beyond the limit. */
  set(key: K, value: V, size: number): void {
    this.delete(key);
    if (size > this.maxSize) return;
    this.entries.set(key, { value, size });
    this.used += size;
    for (const [oldest] of this.entries) {
      if (this.used <= this.maxSize) break;
      this.delete(oldest);
    }
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.used -= entry.size;
  }

  clear(): void {
    this.entries.clear();
    this.used = 0;
  }
}
