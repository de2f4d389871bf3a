/**
 * The Lua scripts of the shared tier (sharedTier.ts): each runs atomically in Redis, so an entry
 * is read with its tags' versions in one round trip, stored only if none of its tags changed
 * since its read began, and a bump moves the counter and every tag it names at once.
 */
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

// KEYS[1] entry, KEYS[2] counter; ARGV: tag prefix, entry, read seq, entry ttl, tag ttl, now ms,
// hold-down ms, then each tag followed by 1 when the answer read it from a global index.
// Returns the entry's ttl, or 0 when refused.
export const STORE = `
local readSeq = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local tagTtl = tonumber(ARGV[5])
local now = tonumber(ARGV[6])
local hold = tonumber(ARGV[7])
local current = tonumber(redis.call('GET', KEYS[2]) or '0')
local refused = false
for i = 8, #ARGV, 2 do
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

// KEYS[1] counter; ARGV: tag prefix, now ms, tag ttl, then the tags.
export const BUMP = `
local s = redis.call('INCR', KEYS[1])
for i = 4, #ARGV do
  redis.call('SET', ARGV[1] .. ARGV[i], s .. ':' .. ARGV[2], 'PX', ARGV[3])
end
return s`;
