--[[
  TxIds whose stored proof is in a block (a txId re-proven in another block after a reorg is
  left out even if the old block's set still lists it).

  KEYS[1] blockTxIds  STRING of 32-byte raw txIds (a SET in stores written before that layout);
                      a txId may appear twice, it is returned once
  KEYS[2] inclusions  HASH txId -> blockHash(32) .. index(4) .. ...

  ARGV[1] blockHash (32 raw bytes)

  Returns a flat array: txId (32 bytes), index (4 bytes, u32le), ...
]]
local function members(key)
  if redis.call('TYPE', key)['ok'] == 'set' then
    return redis.call('SMEMBERS', key)
  end
  local all = redis.call('GET', key) or ''
  local out = {}
  for i = 1, #all - 31, 32 do
    out[#out + 1] = string.sub(all, i, i + 31)
  end
  return out
end
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
