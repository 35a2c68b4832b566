#!lua
--[[
  Reserves ARGV[1] free UTXOs worth at least ARGV[5] satoshis each (the smallest that qualify)
  for one writer: free → leases, all or nothing. Expired leases (a writer that died between
  reserve and commit) are first returned to free, at most ARGV[6] of them.

  KEYS[1] free zset        (wallet:free)
  KEYS[2] leases zset      (wallet:leases)
  KEYS[3] owners hash      (wallet:owners)
  KEYS[4] sats hash        (wallet:sats)
  KEYS[5] counters hash    (wallet:counters)

  ARGV[1] count (>= 1)
  ARGV[2] owner
  ARGV[3] now (ms)
  ARGV[4] lease expiry (ms)
  ARGV[5] minimum satoshis of one UTXO
  ARGV[6] most expired leases to sweep first

  Returns {'OK', outpoint1, sats1, outpoint2, sats2, ...} or {'EXHAUSTED', available}: fewer than
  count qualifying UTXOs are free; then nothing but the sweep changed.
]]
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[3], 'LIMIT', 0, tonumber(ARGV[6]))
for _, op in ipairs(expired) do
  unlease(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], op)
end

local count = tonumber(ARGV[1])
local picked = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[5], '+inf', 'WITHSCORES', 'LIMIT', 0, count)
if #picked < 2 * count then
  return {'EXHAUSTED', redis.call('ZCOUNT', KEYS[1], ARGV[5], '+inf')}
end
local out = {'OK'}
for i = 1, #picked, 2 do
  local op = picked[i]
  local sats = redis.call('HGET', KEYS[4], op)
  redis.call('ZREM', KEYS[1], op)
  redis.call('ZADD', KEYS[2], ARGV[4], op)
  redis.call('HSET', KEYS[3], op, ARGV[2])
  redis.call('HINCRBY', KEYS[5], 'freeCount', -1)
  redis.call('HINCRBY', KEYS[5], 'freeSats', '-' .. sats)
  redis.call('HINCRBY', KEYS[5], 'leasedCount', 1)
  redis.call('HINCRBY', KEYS[5], 'leasedSats', sats)
  out[#out + 1] = op
  out[#out + 1] = sats
end
return out
