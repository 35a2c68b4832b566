-- Shared by the arc scripts (loaded in front of each by lua-commands.ts; not a command itself:
-- its name has no key count). members(key): the txIds listed under a block, 32 raw bytes each.
-- The block key is a STRING of appended ids (arc-store-proofs-n.lua), or a SET in stores written
-- before that layout. A txId may appear twice in the string; callers skip the second.
-- ids32(s): the 32-byte ids appended in the string s (also the owner index's lists, arc-index-owner-4.lua).
local function ids32(all)
  local out = {}
  for i = 1, #all - 31, 32 do
    out[#out + 1] = string.sub(all, i, i + 31)
  end
  return out
end
local function members(key)
  if redis.call('TYPE', key)['ok'] == 'set' then
    return redis.call('SMEMBERS', key)
  end
  return ids32(redis.call('GET', key) or '')
end
