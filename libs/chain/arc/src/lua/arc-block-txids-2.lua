#!lua
--[[
  TxIds whose stored proof is in a block (a txId re-proven in another block after a reorg is
  left out even if the old block's set still lists it).

  KEYS[1] blockTxIds  STRING of 32-byte raw txIds (a SET in stores written before that layout);
                      a txId may appear twice, it is returned once
  KEYS[2] inclusions  HASH txId -> blockHash(32) .. index(4) .. ...

  ARGV[1] blockHash (32 raw bytes)

  Returns a flat array: txId (32 bytes), index (4 bytes, u32le), ...
]]
-- members(key): the block's txIds (block-members.lua, loaded in front of every arc script)
local out = {}
local seen = {}
for _, txId in ipairs(members(KEYS[1])) do
  local v = not seen[txId] and redis.call('HGET', KEYS[2], txId)
  seen[txId] = true
  if v and string.sub(v, 1, 32) == ARGV[1] then
    out[#out + 1] = txId
    out[#out + 1] = string.sub(v, 33, 36)
  end
end
return out
