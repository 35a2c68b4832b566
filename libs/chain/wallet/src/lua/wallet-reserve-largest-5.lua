#!lua
--[[
  Reserves the largest free UTXOs above ARGV[4] satoshis, largest first, until they sum to
  ARGV[1] satoshis or ARGV[3] of them are taken (the splitter's inputs): free → leases.
  All or nothing: if what it would take sums to less than ARGV[2], nothing changes.

  KEYS[1] free zset        (wallet:free)
  KEYS[2] leases zset      (wallet:leases)
  KEYS[3] owners hash      (wallet:owners)
  KEYS[4] sats hash        (wallet:sats)
  KEYS[5] counters hash    (wallet:counters)

  ARGV[1] wanted satoshis
  ARGV[2] least acceptable satoshis
  ARGV[3] most inputs
  ARGV[4] consider only UTXOs worth more than this (exclusive)
  ARGV[5] owner
  ARGV[6] lease expiry (ms)

  Returns {'OK', outpoint1, sats1, ...} or {'EXHAUSTED', satoshis it could have taken}.
]]
local candidates = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', '(' .. ARGV[4], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
local wanted = tonumber(ARGV[1])
local total = 0
local take = {}
for i = 1, #candidates, 2 do
  if total >= wanted then break end
  take[#take + 1] = candidates[i]
  total = total + tonumber(candidates[i + 1])
end
if total < tonumber(ARGV[2]) or #take == 0 then
  return {'EXHAUSTED', tostring(total)}
end
local out = {'OK'}
for _, op in ipairs(take) do
  local sats = redis.call('HGET', KEYS[4], op)
  redis.call('ZREM', KEYS[1], op)
  redis.call('ZADD', KEYS[2], ARGV[6], op)
  redis.call('HSET', KEYS[3], op, ARGV[5])
  redis.call('HINCRBY', KEYS[5], 'freeCount', -1)
  redis.call('HINCRBY', KEYS[5], 'freeSats', '-' .. sats)
  redis.call('HINCRBY', KEYS[5], 'leasedCount', 1)
  redis.call('HINCRBY', KEYS[5], 'leasedSats', sats)
  out[#out + 1] = op
  out[#out + 1] = sats
end
return out
