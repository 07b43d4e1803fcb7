import type { RedisLimiter } from "./redis.js";
import { script } from "./redis-scripts.js";
import { type Reservation, type SpendCounter, type SpendMeter, validateAmounts } from "./spend.js";

/**
 * KEYS: the counters. ARGV: amount, limit and ttl of each, in KEYS order.
 * Returns { -1, i } when counter i does not exist yet (the caller seeds it and asks again); else
 * { 1, 0, spent..., reserved... } having added every amount (at most what is left of each), or
 * { 0, i, spent... } having added none, i being the first with nothing left.
 */
const RESERVE = script(`
local values = {}
for i = 1, #KEYS do
  local v = redis.call('GET', KEYS[i])
  if not v then return { -1, i } end
  values[i] = tonumber(v)
end
for i = 1, #KEYS do
  if values[i] >= tonumber(ARGV[3 * i - 1]) then
    local out = { 0, i }
    for j = 1, #KEYS do out[j + 2] = values[j] end
    return out
  end
end
local out = { 1, 0 }
local n = #KEYS
for i = 1, n do
  local reserved = math.min(tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i - 1]) - values[i])
  out[i + 2] = redis.call('INCRBY', KEYS[i], reserved)
  out[n + i + 2] = reserved
  redis.call('PEXPIRE', KEYS[i], ARGV[3 * i])
end
return out
`);

/** KEYS: one counter. ARGV: its seed and ttl. Sets it only when absent, so the first seed of any gateway wins. */
const SEED = script(`
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
return 1
`);

/** KEYS: the counters. ARGV: the change of each. A counter that has expired stays so; it answers -1. */
const SETTLE = script(`
local out = {}
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local v = redis.call('INCRBY', KEYS[i], ARGV[i])
    if v < 0 then redis.call('SET', KEYS[i], 0, 'KEEPTTL') v = 0 end
    out[i] = v
  else
    out[i] = -1
  end
end
return out
`);

/** KEYS: the counters. Returns each value, -1 for an absent one. */
const PEEK = script(`
local out = {}
for i = 1, #KEYS do
  local v = redis.call('GET', KEYS[i])
  if v then out[i] = tonumber(v) else out[i] = -1 end
end
return out
`);

/**
 * Spend counters in the Redis every gateway shares: each reservation is one script, so budgets are exact across
 * all of them. Runs on a limiter's connection and fails closed as it does (LimiterUnavailableError).
 */
export class RedisSpendMeter implements SpendMeter {
  /** Seeds under way in this process: simultaneous first uses ask for a counter's past spend once. */
  private readonly seeding = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: RedisLimiter,
    private readonly prefix = "agentry:spend:",
  ) {}

  async reserve(counters: readonly SpendCounter[], amounts: readonly number[]): Promise<Reservation> {
    validateAmounts(counters, amounts);
    const keys = counters.map((c) => this.prefix + c.key);
    const args = counters.flatMap((c, i) => [String(amounts[i]), String(c.limit), String(c.ttlMs)]);
    // Each round seeds at most the one counter Redis lacks; there are few counters per send.
    for (let round = 0; round <= counters.length; round++) {
      const reply = numbers(await this.redis.run(RESERVE, keys, args));
      const [outcome, index] = reply;
      if (outcome === -1) {
        await this.seed(counters[(index ?? 1) - 1]!);
        continue;
      }
      const spent = reply.slice(2, 2 + counters.length);
      if (outcome === 1) return { allowed: true, spent, amounts: reply.slice(2 + counters.length) };
      return { allowed: false, refused: (index ?? 1) - 1, spent };
    }
    throw new Error("spend counters expired while being seeded");
  }

  private seed(counter: SpendCounter): Promise<void> {
    let pending = this.seeding.get(counter.key);
    if (!pending) {
      pending = counter
        .seed()
        .then(async (seed) => {
          await this.redis.run(SEED, [this.prefix + counter.key], [String(seed), String(counter.ttlMs)]);
        })
        .finally(() => this.seeding.delete(counter.key));
      this.seeding.set(counter.key, pending);
    }
    return pending;
  }

  async settle(keys: readonly string[], reserved: readonly number[], actual: readonly number[]) {
    const changes = keys.map((_, i) => String((actual[i] ?? 0) - (reserved[i] ?? 0)));
    const reply = numbers(
      await this.redis.run(
        SETTLE,
        keys.map((k) => this.prefix + k),
        changes,
      ),
    );
    return reply.map((v) => (v < 0 ? null : v));
  }

  async peek(keys: readonly string[]) {
    if (keys.length === 0) return [];
    const reply = numbers(
      await this.redis.run(
        PEEK,
        keys.map((k) => this.prefix + k),
        [],
      ),
    );
    return reply.map((v) => (v < 0 ? null : v));
  }
}

function numbers(reply: unknown): number[] {
  if (!Array.isArray(reply)) throw new Error(`unexpected spend script reply: ${String(reply)}`);
  return reply.map(Number);
}
