--[[
  Accepts a transaction into the devnet mempool, atomically.

  KEYS[1] raw      HASH txId -> raw hex
  KEYS[2] spent    HASH outpoint -> spending txId
  KEYS[3] outputs  HASH outpoint -> satoshis (spendable outputs of known transactions)
  KEYS[4] mempool  ZSET txId by arrival
  KEYS[5] seq      arrival counter

  ARGV[1] txId
  ARGV[2] raw hex
  ARGV[3] number of inputs n
  ARGV[4 .. 3+2n]  per input: outpoint "txId:vout", "1" when it is a valid faucet outpoint else "0"
  ARGV[4+2n] number of spendable outputs m
  ARGV[..]   per output: outpoint, satoshis

  Returns {"accepted"} | {"known"} | {"DOUBLE_SPEND", outpoint, spender} | {"MISSING_INPUT", outpoint}
  Nothing is written unless the transaction is accepted.
]]
local txId = ARGV[1]
if redis.call('HEXISTS', KEYS[1], txId) == 1 then
  return {'known'}
end
local n = tonumber(ARGV[3])
for i = 0, n - 1 do
  local outpoint = ARGV[4 + 2 * i]
  local faucet = ARGV[5 + 2 * i]
  local spender = redis.call('HGET', KEYS[2], outpoint)
  if spender and spender ~= txId then
    return {'DOUBLE_SPEND', outpoint, spender}
  end
  if faucet ~= '1' and redis.call('HEXISTS', KEYS[3], outpoint) == 0 then
    return {'MISSING_INPUT', outpoint}
  end
end
for i = 0, n - 1 do
  redis.call('HSET', KEYS[2], ARGV[4 + 2 * i], txId)
end
local base = 4 + 2 * n
local m = tonumber(ARGV[base])
for j = 0, m - 1 do
  redis.call('HSET', KEYS[3], ARGV[base + 1 + 2 * j], ARGV[base + 2 + 2 * j])
end
redis.call('HSET', KEYS[1], txId, ARGV[2])
redis.call('ZADD', KEYS[4], redis.call('INCR', KEYS[5]), txId)
return {'accepted'}
