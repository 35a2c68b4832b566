#!lua
--[[
  A window of an owner's txIds in one block (ArcProofStore.ownerTxIdsOfBlock), in the order the
  index lists them. Read-only.

  KEYS[1] ownerTxIds  HASH block hash hex -> txIds of this owner in that block (32 raw bytes each)

  ARGV[1] block hash hex
  ARGV[2] start (0-based, inclusive)
  ARGV[3] end (exclusive)

  Returns {count, txId...}: how many txIds the owner has in the block, then those in [start, end).
]]
local list = redis.call('HGET', KEYS[1], ARGV[1]) or ''
local count = math.floor(#list / 32)
local out = { count }
local stop = math.min(tonumber(ARGV[3]), count)
for i = tonumber(ARGV[2]), stop - 1 do
  out[#out + 1] = string.sub(list, 32 * i + 1, 32 * i + 32)
end
return out
