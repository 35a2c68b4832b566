#!lua
--[[
  Settles a transaction ARC accepted (SEEN_ON_NETWORK or MINED): its pending outputs become
  free and its inputs stop being tracked (they are spent for good). Idempotent.

  KEYS[1] free zset        (wallet:free)
  KEYS[2] sats hash        (wallet:sats)
  KEYS[3] spent hash       (wallet:spent)
  KEYS[4] pending hash     (wallet:pending)
  KEYS[5] counters hash    (wallet:counters)
  KEYS[6] txs zset         (wallet:txs)
  KEYS[7] tx hash          (wallet:tx:<txId>)

  ARGV[1] txId

  Returns the number of outputs made free, or -1 when the pool knows no unsettled transaction
  with this txId (never committed, or already settled).
]]
local tx = redis.call('HMGET', KEYS[7], 'inputs', 'outputs')
if not tx[1] then
  return -1
end
for op in string.gmatch(tx[1], '[^,]+') do
  if redis.call('HGET', KEYS[3], op) == ARGV[1] then
    local sats = redis.call('HGET', KEYS[2], op)
    redis.call('HDEL', KEYS[3], op)
    redis.call('HDEL', KEYS[2], op)
    redis.call('HINCRBY', KEYS[5], 'spentCount', -1)
    redis.call('HINCRBY', KEYS[5], 'spentSats', '-' .. sats)
  end
end
local freed = 0
for pair in string.gmatch(tx[2] or '', '[^,]+') do
  local op = string.sub(pair, 1, string.find(pair, '=', 1, true) - 1)
  if redis.call('HGET', KEYS[4], op) == ARGV[1] then
    local sats = redis.call('HGET', KEYS[2], op)
    redis.call('HDEL', KEYS[4], op)
    redis.call('ZADD', KEYS[1], sats, op)
    redis.call('HINCRBY', KEYS[5], 'pendingCount', -1)
    redis.call('HINCRBY', KEYS[5], 'pendingSats', '-' .. sats)
    redis.call('HINCRBY', KEYS[5], 'freeCount', 1)
    redis.call('HINCRBY', KEYS[5], 'freeSats', sats)
    freed = freed + 1
  end
end
redis.call('DEL', KEYS[7])
redis.call('ZREM', KEYS[6], ARGV[1])
return freed
