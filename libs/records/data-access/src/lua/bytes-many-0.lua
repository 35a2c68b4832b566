--[[
  The 'bytes' field of many records in one command (GraphQL content loader).

  No KEYS: the record keys are built from ARGV[1] (like navigate-1.lua builds the chain key).
  ARGV[1]     record key prefix (records:rec:)
  ARGV[2..]   txIds

  Returns the bytes of each txId in order (nil where unknown).
]]
local prefix = ARGV[1]
local out = {}
for i = 2, #ARGV do
  out[i - 1] = redis.call('HGET', prefix .. ARGV[i], 'bytes')
end
return out
