#!lua
--[[
  Settles a transaction ARC definitively rejected: its pending outputs are dropped (they will
  never exist); its inputs return to free when ARGV[2] is '1' (the transaction never reached
  the network and the rejection does not say the inputs are spent), otherwise they are dropped
  too. The caller decides ARGV[2] by the release rules (release-rules.ts); an ambiguous outcome
  MUST NOT call this at all. Idempotent.

  KEYS[1] free zset        (wallet:free)
  KEYS[2] sats hash        (wallet:sats)
  KEYS[3] spent hash       (wallet:spent)
  KEYS[4] pending hash     (wallet:pending)
  KEYS[5] counters hash    (wallet:counters)
  KEYS[6] txs zset         (wallet:txs)
  KEYS[7] tx hash          (wallet:tx:<txId>)

  ARGV[1] txId
  ARGV[2] '1' to return the inputs to free, '0' to drop them

  Returns the number of inputs returned to free, or -1 when the pool knows no unsettled
  transaction with this txId.
]]
local tx = redis.call('HMGET', KEYS[7], 'inputs', 'outputs')
if not tx[1] then
  return -1
end
local released = 0
for op in string.gmatch(tx[1], '[^,]+') do
  if redis.call('HGET', KEYS[3], op) == ARGV[1] then
    local sats = redis.call('HGET', KEYS[2], op)
    redis.call('HDEL', KEYS[3], op)
    redis.call('HINCRBY', KEYS[5], 'spentCount', -1)
    redis.call('HINCRBY', KEYS[5], 'spentSats', '-' .. sats)
    if ARGV[2] == '1' then
      redis.call('ZADD', KEYS[1], sats, op)
      redis.call('HINCRBY', KEYS[5], 'freeCount', 1)
      redis.call('HINCRBY', KEYS[5], 'freeSats', sats)
      released = released + 1
    else
      redis.call('HDEL', KEYS[2], op)
    end
  end
end
for pair in string.gmatch(tx[2] or '', '[^,]+') do
  local op = string.sub(pair, 1, string.find(pair, '=', 1, true) - 1)
  if redis.call('HGET', KEYS[4], op) == ARGV[1] then
    local sats = redis.call('HGET', KEYS[2], op)
    redis.call('HDEL', KEYS[4], op)
    redis.call('HDEL', KEYS[2], op)
    redis.call('HINCRBY', KEYS[5], 'pendingCount', -1)
    redis.call('HINCRBY', KEYS[5], 'pendingSats', '-' .. sats)
  end
end
redis.call('DEL', KEYS[7])
redis.call('ZREM', KEYS[6], ARGV[1])
return released
