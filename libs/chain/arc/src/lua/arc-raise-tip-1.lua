#!lua
--[[
  Moves the stored tip up to a block the caller verified (ArcProofStore.raiseTip): only when no
  tip is stored or the stored one is lower, so a writer holding an older tip (a confirmation
  pass that read the headers source before a callback proved a newer block) cannot move it down.
  Only reconcile sets the tip unconditionally (a reorg may lower it).

  KEYS[1] tip  HASH height, hash

  ARGV[1] height
  ARGV[2] block hash hex

  Returns 1 when the tip moved, 0 when it stayed.
]]
local stored = tonumber(redis.call('HGET', KEYS[1], 'height') or '-1')
if stored >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'height', ARGV[1], 'hash', ARGV[2])
return 1
