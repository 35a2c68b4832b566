#!lua
--[[
  Settles transactions ARC accepted (SEEN_ON_NETWORK or MINED): for each, its pending outputs
  become free and its inputs stop being tracked (they are spent for good). Idempotent: a
  transaction the pool does not hold unsettled is left alone.

  KEYS[1]    free zset        (wallet:free)
  KEYS[2]    sats hash        (wallet:sats)
  KEYS[3]    spent hash       (wallet:spent)
  KEYS[4]    pending hash     (wallet:pending)
  KEYS[5]    counters hash    (wallet:counters)
  KEYS[6]    txs zset         (wallet:txs)
  KEYS[7..]  tx hashes        (wallet:tx:<txId>), one per ARGV, in the same order

  ARGV[1..]  txIds

  Returns, per txId in order, the number of outputs made free, or -1 when the pool knows no
  unsettled transaction with this txId (never committed, or already settled).

  A transaction is unsettled exactly while it is a member of KEYS[6] (commit adds it with its tx
  hash, confirm and fail remove both), so for a batch one ZMSCORE tells which txIds need any work:
  most of a callback batch was confirmed when it was published, and costs no command of its own.
  A single txId reads its tx hash directly (the same one command).
]]
local function confirm(txKey, txId)
  local tx = redis.call('HMGET', txKey, 'inputs', 'outputs')
  if not tx[1] then
    return -1
  end
  for op in string.gmatch(tx[1], '[^,]+') do
    if redis.call('HGET', KEYS[3], op) == txId then
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
    if redis.call('HGET', KEYS[4], op) == txId then
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
  redis.call('DEL', txKey)
  redis.call('ZREM', KEYS[6], txId)
  return freed
end

local unsettled = false
if #ARGV > 1 then
  unsettled = redis.call('ZMSCORE', KEYS[6], unpack(ARGV))
end
local out = {}
for i = 1, #ARGV do
  if unsettled and not unsettled[i] then
    out[i] = -1
  else
    out[i] = confirm(KEYS[6 + i], ARGV[i])
  end
end
return out
