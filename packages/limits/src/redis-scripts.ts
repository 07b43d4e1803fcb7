import { createHash } from "node:crypto";

export interface Script {
  source: string;
  sha1: string;
}

export function script(body: string): Script {
  // Every script decides on the server's clock, so all gateways share one notion of time.
  const source = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
${body}`;
  return { source, sha1: createHash("sha1").update(source).digest("hex") };
}

/**
 * KEYS: one sorted set per bucket (member per admitted request, score = its time in ms).
 * ARGV: limit and windowMs of each bucket, in KEYS order.
 * Drops entries at or before now - windowMs from every bucket, then admits into all of them or none.
 * Returns { allowed (1|0), now, then per bucket: count, newest, freeing } (see BucketState).
 */
export const TAKE = script(`
local n = #KEYS
local counts = {}
local allowed = 1
for i = 1, n do
  local window = tonumber(ARGV[2 * i])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  counts[i] = redis.call('ZCARD', KEYS[i])
  if counts[i] >= tonumber(ARGV[2 * i - 1]) then allowed = 0 end
end
local out = { allowed, now }
for i = 1, n do
  local key = KEYS[i]
  local limit = tonumber(ARGV[2 * i - 1])
  local count = counts[i]
  if allowed == 1 then
    -- Members must be unique: entries of the same millisecond are numbered, and since trimming removes a
    -- millisecond's entries all at once, their count is the next free number.
    local member = now .. ':' .. redis.call('ZCOUNT', key, now, now)
    redis.call('ZADD', key, now, member)
    -- Every entry is out of the window windowMs from now, so the whole key can go then.
    redis.call('PEXPIRE', key, tonumber(ARGV[2 * i]))
    count = count + 1
  end
  local newest = 0
  if count > 0 then
    newest = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
  end
  local freeing = 0
  if allowed == 0 and limit > 0 and count >= limit then
    freeing = tonumber(redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')[2])
  end
  out[#out + 1] = count
  out[#out + 1] = newest
  out[#out + 1] = freeing
end
return out
`);

/** Sets the key's expiry to its latest lease expiry, so an abandoned set disappears with its last lease. */
const EXPIRE_WITH_LAST_LEASE = `
local function expire_with_last_lease(key)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]
  if last then redis.call('PEXPIRE', key, math.max(1, tonumber(last) - now)) end
end
`;

/**
 * KEYS[1]: sorted set of leases (member = lease id, score = expiry in ms). ARGV: limit, ttlMs, lease id.
 * Expired leases are dropped first, so the slots of a gateway that died come back within ttl.
 * Returns { 1, 0 } when acquired, { 0, retryAfterMs } when refused.
 */
export const ACQUIRE = script(`${EXPIRE_WITH_LAST_LEASE}
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if redis.call('ZCARD', key) < limit then
  redis.call('ZADD', key, now + ttl, ARGV[3])
  expire_with_last_lease(key)
  return { 1, 0 }
end
local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]
if first then return { 0, tonumber(first) - now } end
return { 0, ttl }
`);

/**
 * KEYS[1]: the lease set; ARGV: lease id, ttlMs. Extends a live lease; an expired one is removed, not revived.
 * Returns 1 when renewed, 0 otherwise.
 */
export const RENEW = script(`${EXPIRE_WITH_LAST_LEASE}
local key = KEYS[1]
local expiry = redis.call('ZSCORE', key, ARGV[1])
if not expiry then return 0 end
if tonumber(expiry) <= now then
  redis.call('ZREM', key, ARGV[1])
  return 0
end
redis.call('ZADD', key, 'XX', now + tonumber(ARGV[2]), ARGV[1])
expire_with_last_lease(key)
return 1
`);

/** KEYS[1]: the lease set; ARGV[1]: lease id. */
export const RELEASE = script(`
return redis.call('ZREM', KEYS[1], ARGV[1])
`);
