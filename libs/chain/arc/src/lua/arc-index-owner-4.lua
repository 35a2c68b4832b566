#!lua
--[[
  Indexes one owner's txIds under one block (the owner's blocks and its txIds per block), so a
  tenant's blocks are read without scanning anything. Runs in storeProofs' MULTI *before*
  arc-store-proofs-n.lua writes the same proofs ('store' mode), so it still sees each txId's
  previous inclusion; or alone, to index proofs stored before this index existed ('merge' mode).

  Invariant kept: a txId whose stored inclusion points into block B is listed once under B in its
  owner's txIds, B is in the owner's blocks (scored by B's height) and the owner in B's owners.

  KEYS[1] inclusions   HASH txId(32 bytes) -> blockHash(32) .. the rest of the inclusion
  KEYS[2] ownerBlocks  ZSET block hash hex by height (this owner)
  KEYS[3] ownerTxIds   HASH block hash hex -> txIds of this owner in that block, 32 raw bytes each
  KEYS[4] blockOwners  SET of owners with txIds indexed in this block

  ARGV[1] blockHash (32 raw bytes)
  ARGV[2] blockHash (hex)
  ARGV[3] block height
  ARGV[4] owner
  ARGV[5] mode: 'store' (a txId whose inclusion already points into this block is listed already;
          one that points into another block is moved: taken out of that block's list, and that
          block out of the owner's blocks once it lists none) or 'merge' (a txId is added when its
          inclusion points into this block and the owner's list of it does not hold it yet)
  ARGV[6..] txIds (32 raw bytes each, distinct)

  Returns the number of txIds added.
]]
local blockRaw, blockHex, owner, mode = ARGV[1], ARGV[2], ARGV[4], ARGV[5]
local function hex(raw)
  return (string.gsub(raw, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
-- ids32(s): the 32-byte ids of a list (block-members.lua, loaded in front of every arc script)

local listed = {}
if mode == 'merge' then
  for _, txId in ipairs(ids32(redis.call('HGET', KEYS[3], blockHex) or '')) do
    listed[txId] = true
  end
end
local added = {}
local movedFrom = {}
for i = 6, #ARGV do
  local txId = ARGV[i]
  local current = redis.call('HGET', KEYS[1], txId)
  local here = current and string.sub(current, 1, 32) == blockRaw
  if mode == 'merge' then
    if here and not listed[txId] then
      added[#added + 1] = txId
      listed[txId] = true
    end
  elseif not here then
    if current then
      local from = string.sub(current, 1, 32)
      movedFrom[from] = movedFrom[from] or {}
      movedFrom[from][txId] = true
    end
    added[#added + 1] = txId
  end
end

-- Moves (a reorg proved the txId again elsewhere before the old block was dropped): one pass per old block.
for from, moving in pairs(movedFrom) do
  local field = hex(from)
  local kept = {}
  for _, txId in ipairs(ids32(redis.call('HGET', KEYS[3], field) or '')) do
    if not moving[txId] then
      kept[#kept + 1] = txId
    end
  end
  if #kept == 0 then
    redis.call('HDEL', KEYS[3], field)
    redis.call('ZREM', KEYS[2], field)
  else
    redis.call('HSET', KEYS[3], field, table.concat(kept))
  end
end

if #added > 0 then
  redis.call('HSET', KEYS[3], blockHex, (redis.call('HGET', KEYS[3], blockHex) or '') .. table.concat(added))
  redis.call('ZADD', KEYS[2], ARGV[3], blockHex)
  redis.call('SADD', KEYS[4], owner)
end
return #added
