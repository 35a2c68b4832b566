#!lua
--[[
  Moves many outbox entries' due time in one command, over several partitions' outboxes (one
  Redis: a script may touch keys of any slot; a Redis Cluster sends one ZADD per partition
  instead). Entries no longer in their outbox (settled meanwhile) stay out: ZADD XX.

  KEYS[i]   the outbox holding ARGV[i + 1] (records:outbox of its partition; repeats allowed)
  ARGV[1]   the new score (due time, ms)
  ARGV[2..] txIds, one per key

  Returns the number of outboxes written.
]]
local score = ARGV[1]
local byKey = {}
local order = {}
for i = 1, #KEYS do
  local args = byKey[KEYS[i]]
  if not args then
    args = {}
    byKey[KEYS[i]] = args
    order[#order + 1] = KEYS[i]
  end
  args[#args + 1] = score
  args[#args + 1] = ARGV[i + 1]
end
for _, key in ipairs(order) do
  local args = byKey[key]
  -- unpack is bounded by Lua's stack (LUAI_MAXCSTACK 8000): at most 3,000 members a call.
  for from = 1, #args, 6000 do
    redis.call('ZADD', key, 'XX', unpack(args, from, math.min(from + 5999, #args)))
  end
end
return #order
