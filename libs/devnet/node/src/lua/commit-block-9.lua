#!lua
--[[
  Commits a produced block, atomically: compare-and-set on the tip, then the block, its
  coinbase, every transaction's position and Merkle branch, and removal of exactly the included
  transactions from the mempool.

  KEYS[1] tip          HASH {hash, height, time}
  KEYS[2] mempool      ZSET
  KEYS[3] raw          HASH txId -> raw hex (the coinbase is added)
  KEYS[4] outputs      HASH outpoint -> satoshis (the coinbase output is added)
  KEYS[5] headers      HASH blockHash -> header hex
  KEYS[6] heights      HASH blockHash -> height
  KEYS[7] hashes       HASH height -> blockHash
  KEYS[8] block-txids  HASH blockHash -> comma-separated txIds
  KEYS[9] mined        HASH txId -> "blockHash|height|index|nodes"

  ARGV[1] expected tip hash ("" when the chain is empty: genesis)
  ARGV[2] block hash   ARGV[3] height   ARGV[4] header time (s)   ARGV[5] header hex
  ARGV[6] coinbase txId   ARGV[7] coinbase raw hex   ARGV[8] coinbase outpoint   ARGV[9] coinbase satoshis
  ARGV[10] comma-separated txIds (coinbase first)
  ARGV[11] number of transactions n (coinbase included)
  ARGV[12 .. 11+2n] per transaction in block order: txId, mined value

  Returns {"OK"} | {"STALE_TIP", current tip hash} | {"NOT_IN_MEMPOOL", txId}
  A refused commit writes nothing (a producer that loses a race or crashes changes nothing).
  storeMined and storeBlock: block-store.lua, loaded in front of this script.
]]
local tip = redis.call('HGET', KEYS[1], 'hash') or ''
if tip ~= ARGV[1] then
  return {'STALE_TIP', tip}
end
local n = tonumber(ARGV[11])
-- Index 0 is the coinbase, which never was in the mempool.
for i = 1, n - 1 do
  local txId = ARGV[12 + 2 * i]
  if not redis.call('ZSCORE', KEYS[2], txId) then
    return {'NOT_IN_MEMPOOL', txId}
  end
end
for i = 1, n - 1 do
  redis.call('ZREM', KEYS[2], ARGV[12 + 2 * i])
end
storeMined(KEYS[9], 12, n)
redis.call('HSET', KEYS[3], ARGV[6], ARGV[7])
redis.call('HSET', KEYS[4], ARGV[8], ARGV[9])
storeBlock(KEYS[1], KEYS[5], KEYS[6], KEYS[7], KEYS[8], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[10])
return {'OK'}
