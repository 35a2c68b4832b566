#!lua
--[[
  Replaces the tip block by a sibling at the same height (devnet reorg fault): same parent, same
  transactions, a new coinbase (so a new Merkle root and new proofs) and a new header. The old
  block's header, height and txIds stay stored, so it can still be looked up, off the main chain
  (hashes[height] no longer names it: confirmations -1).

  KEYS[1] tip          HASH {hash, height, time}
  KEYS[2] raw          HASH txId -> raw hex
  KEYS[3] outputs      HASH outpoint -> satoshis
  KEYS[4] headers      HASH blockHash -> header hex
  KEYS[5] heights      HASH blockHash -> height
  KEYS[6] hashes       HASH height -> blockHash
  KEYS[7] block-txids  HASH blockHash -> comma-separated txIds
  KEYS[8] mined        HASH txId -> "blockHash|height|index|nodes"

  ARGV[1] expected tip hash (the block replaced)
  ARGV[2] new block hash   ARGV[3] height   ARGV[4] header time (s)   ARGV[5] header hex
  ARGV[6] old coinbase txId   ARGV[7] its outpoint ("txId:0", the field in outputs)
  ARGV[8] new coinbase txId   ARGV[9] new coinbase raw hex   ARGV[10] its outpoint
  ARGV[11] coinbase satoshis
  ARGV[12] comma-separated txIds (new coinbase first)
  ARGV[13] number of transactions n (coinbase included)
  ARGV[14 .. 13+2n] per transaction in block order: txId, mined value

  Returns {"OK"} | {"STALE_TIP", current tip hash}
  The old coinbase can have no spender: it is immature at the tip (maturity >= 2).
  storeMined and storeBlock: block-store.lua, loaded in front of this script.
]]
local tip = redis.call('HGET', KEYS[1], 'hash') or ''
if tip ~= ARGV[1] then
  return {'STALE_TIP', tip}
end
local oldCb = ARGV[6]
redis.call('HDEL', KEYS[2], oldCb)
redis.call('HDEL', KEYS[3], ARGV[7])
redis.call('HDEL', KEYS[8], oldCb)
redis.call('HSET', KEYS[2], ARGV[8], ARGV[9])
redis.call('HSET', KEYS[3], ARGV[10], ARGV[11])
storeMined(KEYS[8], 14, tonumber(ARGV[13]))
storeBlock(KEYS[1], KEYS[4], KEYS[5], KEYS[6], KEYS[7], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[12])
return {'OK'}
