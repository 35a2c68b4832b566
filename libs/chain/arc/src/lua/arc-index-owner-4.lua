#!lua
--[[
  Indexes one owner's txIds under one block (the owner's blocks and its txIds per block), so a
  tenant's blocks are read without scanning anything. Step 3 of storeProofs, after the shards
  stored the inclusions and answered where each txId was proven before; or alone, to index proofs
  stored before this index existed (indexOwnersOfBlock: no previous blocks). Idempotent: a txId
  already listed under the block is not listed again, so a store repeated after a crash between
  its steps indexes what the first attempt missed.

  Invariant kept: a txId whose stored inclusion points into block B is listed once under B in its
  owner's txIds, B is in the owner's blocks (scored by B's height) and the owner in B's owners.
  A block no longer stored (a reorg walk finished meanwhile) is not indexed: the walk cleans owner
  indexes first and its last step refuses while any owner lists the block, so none outlives it.

  KEYS[1] ownerBlocks  ZSET block hash hex by height (this owner)
  KEYS[2] ownerTxIds   HASH block hash hex -> txIds of this owner in that block, 32 raw bytes each
  KEYS[3] blockOwners  SET of owners with txIds indexed in this block
  KEYS[4] blocks       HASH blockHash(32 bytes) -> header .. height

  ARGV[1] blockHash (32 raw bytes)
  ARGV[2] blockHash (hex)
  ARGV[3] block height
  ARGV[4] owner
  ARGV[5..] pairs: txId (32 raw bytes, distinct), the block (32 raw bytes) its inclusion pointed
          into before ('' none): a txId moved from another block is taken out of that block's
          list, and that block out of the owner's blocks once it lists none

  Returns the number of txIds added, or -1 when the block is not stored.
]]
local blockRaw, blockHex, owner = ARGV[1], ARGV[2], ARGV[4]
if redis.call('HEXISTS', KEYS[4], blockRaw) == 0 then
  return -1
end
local function hex(raw)
  return (string.gsub(raw, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
-- ids32(s): the 32-byte ids of a list (block-members.lua, loaded in front of every arc script)

local listed = {}
for _, txId in ipairs(ids32(redis.call('HGET', KEYS[2], blockHex) or '')) do
  listed[txId] = true
end
local added = {}
local movedFrom = {}
for i = 5, #ARGV, 2 do
  local txId, from = ARGV[i], ARGV[i + 1]
  if from ~= '' and from ~= blockRaw then
    movedFrom[from] = movedFrom[from] or {}
    movedFrom[from][txId] = true
  end
  if not listed[txId] then
    added[#added + 1] = txId
    listed[txId] = true
  end
end

-- Moves (a reorg proved the txId again elsewhere before the old block was dropped): one pass per old block.
for from, moving in pairs(movedFrom) do
  local field = hex(from)
  local kept = {}
  for _, txId in ipairs(ids32(redis.call('HGET', KEYS[2], field) or '')) do
    if not moving[txId] then
      kept[#kept + 1] = txId
    end
  end
  if #kept == 0 then
    redis.call('HDEL', KEYS[2], field)
    redis.call('ZREM', KEYS[1], field)
  else
    redis.call('HSET', KEYS[2], field, table.concat(kept))
  end
end

if #added > 0 then
  redis.call('HSET', KEYS[2], blockHex, (redis.call('HGET', KEYS[2], blockHex) or '') .. table.concat(added))
  redis.call('ZADD', KEYS[1], ARGV[3], blockHex)
  redis.call('SADD', KEYS[3], owner)
end
return #added
