#!lua
--[[
  How many of a chain's consecutive versions, from the oldest given, have a stored proof: the
  depth check of accept-successor-16.lua after its 'CHECK_DEPTH' answer (RecordStore). Read-only.
  Its key is the proof store's (chain-arc, the `arc` tag), not a records key: the accept script
  cannot read it in the same call.

  KEYS[1] confirmed index (the proof store's HASH whose fields are the 32 raw bytes of every txId
          with a stored proof: chain-arc's inclusions)

  ARGV[1..] txIds as 32 raw bytes (display order, as the hash's fields), consecutive chain
            positions, oldest first

  A confirmed version's predecessors are confirmed too (each spends the one before it), so the
  confirmed ones are a prefix of ARGV: a binary search finds its length with about
  log2(#ARGV) + 1 lookups. Returns that length (0..#ARGV).
]]
local lo = 0
local hi = #ARGV
while lo < hi do
  local mid = math.floor((lo + hi + 1) / 2)
  if redis.call('HEXISTS', KEYS[1], ARGV[mid]) == 1 then
    lo = mid
  else
    hi = mid - 1
  end
end
return lo
