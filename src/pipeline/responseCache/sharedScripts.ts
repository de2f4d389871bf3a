/**
 * The Lua scripts of the shared tier (sharedTier.ts): each runs atomically in Redis, so an entry
 * is read with its tags' versions in one round trip, stored only if none of its tags changed
 * since its read began, and a bump moves the counter and every tag it names at once.
 *
 * A bump is dated, and a store compares that date with now, by the clock of the Redis node that
 * runs them (TIME): both scripts of one partition run on one node, so an index hold-down ends
 * when it should whatever the clocks of the publisher that bumped and of the instance that
 * stores (a publisher whose clock ran behind would otherwise end it early, and one whose bump
 * landed late would date it back).
 */

/** Lua: `now`, the node's clock in epoch ms. */
const NODE_NOW = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)`;
// KEYS[1] entry, KEYS[2] counter; ARGV[1] tag key prefix. Returns { counter, entry or '', pttl,
// version of each of the entry's tags or '' }.
export const READ = `
local seq = redis.call('GET', KEYS[2]) or '0'
local e = redis.call('GET', KEYS[1])
if not e then return { seq, '', 0 } end
local out = { seq, e, redis.call('PTTL', KEYS[1]) }
local nl = string.find(e, '\\n', 1, true)
if not nl then return { seq, '', 0 } end
for tag in string.gmatch(string.sub(e, 1, nl - 1), '[^ ]+') do
  out[#out + 1] = redis.call('GET', ARGV[1] .. tag) or ''
end
return out`;

// KEYS[1] entry, KEYS[2] counter; ARGV: tag prefix, entry, read seq, entry ttl, tag ttl,
// hold-down ms, then each tag followed by 1 when the answer read it from a global index.
// Returns the entry's ttl, or 0 when refused.
export const STORE = `${NODE_NOW}
local readSeq = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local tagTtl = tonumber(ARGV[5])
local hold = tonumber(ARGV[6])
local current = tonumber(redis.call('GET', KEYS[2]) or '0')
local refused = false
for i = 7, #ARGV, 2 do
  local key = ARGV[1] .. ARGV[i]
  local v = redis.call('GET', key)
  if not v then
    -- Never changed, or its key expired or was evicted: as if changed now (the next store succeeds).
    if current > readSeq then refused = true end
    redis.call('SET', key, current .. ':0', 'PX', tagTtl)
  else
    local sep = string.find(v, ':', 1, true)
    if tonumber(string.sub(v, 1, sep - 1)) > readSeq then refused = true end
    if redis.call('PTTL', key) < tagTtl then redis.call('PEXPIRE', key, tagTtl) end
    if ARGV[i + 1] == '1' then
      local heldUntil = tonumber(string.sub(v, sep + 1)) + hold
      if heldUntil > now and heldUntil - now < ttl then ttl = heldUntil - now end
    end
  end
end
if refused then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
return ttl`;

// KEYS[1] counter; ARGV: tag prefix, tag ttl, then the tags.
export const BUMP = `${NODE_NOW}
local s = redis.call('INCR', KEYS[1])
for i = 3, #ARGV do
  redis.call('SET', ARGV[1] .. ARGV[i], s .. ':' .. string.format('%d', now), 'PX', ARGV[2])
end
return s`;
