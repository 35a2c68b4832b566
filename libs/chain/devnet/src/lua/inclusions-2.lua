--[[
  Where each txId is mined, with its block header, in one round trip.

  KEYS[1] mined    HASH txId -> "blockHash|height|index|nodes"
  KEYS[2] headers  HASH blockHash -> header hex

  ARGV[1..n] txIds

  Returns a flat array of 2n strings: per txId the mined value and the header hex, or "" and ""
  when it is not mined.
]]
local out = {}
for i = 1, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v then
    local blockHash = string.match(v, '^([^|]+)|')
    out[#out + 1] = v
    out[#out + 1] = redis.call('HGET', KEYS[2], blockHash) or ''
  else
    out[#out + 1] = ''
    out[#out + 1] = ''
  end
end
return out
