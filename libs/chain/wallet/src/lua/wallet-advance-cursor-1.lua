#!lua
--[[
  Moves a height cursor forward, never back (two scanners racing cannot undo each other).

  KEYS[1] cursor string    (wallet:scan-height)
  ARGV[1] height

  Returns 1 when the cursor moved, 0 otherwise.
]]
local current = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) > current then
  redis.call('SET', KEYS[1], ARGV[1])
  return 1
end
return 0
