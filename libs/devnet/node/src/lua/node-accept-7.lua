#!lua
--[[
  The devnet node's mempool door: accepts a validated transaction atomically, spending only
  real, known, unspent outputs (outputs of accepted transactions, and coinbases once mature).
  Scripts, fees and outputs were checked before (node/tx-validator.ts); this script decides
  everything that depends on the shared UTXO state.

  KEYS[1] raw      HASH txId -> raw hex
  KEYS[2] spent    HASH outpoint -> spending txId
  KEYS[3] outputs  HASH outpoint -> satoshis (spendable outputs of known transactions)
  KEYS[4] mempool  ZSET txId by arrival
  KEYS[5] seq      arrival counter
  KEYS[6] mined    HASH txId -> "blockHash|height|index|nodes"
  KEYS[7] tip      HASH {hash, height, time}

  ARGV[1] txId
  ARGV[2] raw hex
  ARGV[3] coinbase maturity (a coinbase of block h is spendable once tip >= h + maturity - 1)
  ARGV[4] number of inputs n
  ARGV[5 .. 4+n]  per input: outpoint "txId:vout"
  ARGV[5+n] number of spendable outputs m
  ARGV[..]   per output: outpoint, satoshis

  Returns {"accepted"} | {"known"}
        | {"DOUBLE_SPEND", outpoint, spender}      (spender is in the mempool)
        | {"SPENT_IN_BLOCK", outpoint, spender}    (spender is mined)
        | {"MISSING_INPUT", outpoint}
        | {"IMMATURE", outpoint, coinbaseHeight}
  Nothing is written unless the transaction is accepted.
]]
local txId = ARGV[1]
if redis.call('HEXISTS', KEYS[1], txId) == 1 then
  return {'known'}
end
local maturity = tonumber(ARGV[3])
local tipHeight = tonumber(redis.call('HGET', KEYS[7], 'height') or '-1')
local n = tonumber(ARGV[4])
for i = 1, n do
  local outpoint = ARGV[4 + i]
  local spender = redis.call('HGET', KEYS[2], outpoint)
  if spender and spender ~= txId then
    if redis.call('HEXISTS', KEYS[6], spender) == 1 then
      return {'SPENT_IN_BLOCK', outpoint, spender}
    end
    return {'DOUBLE_SPEND', outpoint, spender}
  end
  if redis.call('HEXISTS', KEYS[3], outpoint) == 0 then
    return {'MISSING_INPUT', outpoint}
  end
  local parent = string.match(outpoint, '^([^:]+):')
  local where = redis.call('HGET', KEYS[6], parent)
  if where then
    local height, index = string.match(where, '^[^|]+|([^|]+)|([^|]+)|')
    if tonumber(index) == 0 and tipHeight < tonumber(height) + maturity - 1 then
      return {'IMMATURE', outpoint, height}
    end
  end
end
for i = 1, n do
  redis.call('HSET', KEYS[2], ARGV[4 + i], txId)
end
local base = 5 + n
local m = tonumber(ARGV[base])
for j = 0, m - 1 do
  redis.call('HSET', KEYS[3], ARGV[base + 1 + 2 * j], ARGV[base + 2 + 2 * j])
end
redis.call('HSET', KEYS[1], txId, ARGV[2])
redis.call('ZADD', KEYS[4], redis.call('INCR', KEYS[5]), txId)
return {'accepted'}
