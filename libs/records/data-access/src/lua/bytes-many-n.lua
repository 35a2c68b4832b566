#!lua
--[[
  The 'bytes' field of many records in one command (GraphQL content loader).

  KEYS[1..]   record hashes (records:rec:<txId>), all in one slot (the caller groups by slot)

  Returns the bytes of each key in order (nil where unknown).
]]
local out = {}
for i = 1, #KEYS do
  out[i] = redis.call('HGET', KEYS[i], 'bytes')
end
return out
