#!lua
--[[
  Releases an idempotency claim, but only while it is still the caller's own (a claim that
  expired and was taken by another request is left alone).

  KEYS[1] the entry (idempotencyKeys.entry)
  ARGV[1] the owner token of the claim

  Output: 1 released, 0 not ours (or gone)
]]
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, entry = pcall(cjson.decode, current)
if ok and type(entry) == 'table' and entry['state'] == 'pending' and entry['owner'] == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
