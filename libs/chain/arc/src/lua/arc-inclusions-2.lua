--[[
  Stored inclusions of many txIds with their block records, in one round trip.

  KEYS[1] inclusions  HASH txId(32 bytes) -> blockHash(32) .. index .. mask .. nodes
  KEYS[2] blocks      HASH blockHash(32 bytes) -> header(80) .. height(4)

  ARGV[1..n] txIds (32 raw bytes each)

  Returns a flat array of 2n bulk strings: per txId its inclusion and its block record, or ""
  and "" when no proof is stored.
]]
local out = {}
for i = 1, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  local b = v and redis.call('HGET', KEYS[2], string.sub(v, 1, 32))
  if v and b then
    out[#out + 1] = v
    out[#out + 1] = b
  else
    out[#out + 1] = ''
    out[#out + 1] = ''
  end
end
return out
