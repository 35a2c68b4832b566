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
-- Grouped by outbox: each key's members gather at the position of its first occurrence.
local first = {}
local members = {}
for i = 1, #KEYS do
  local at = first[KEYS[i]]
  if not at then
    at = i
    first[KEYS[i]] = i
    members[i] = {}
  end
  local args = members[at]
  args[#args + 1] = score
  args[#args + 1] = ARGV[i + 1]
end
local written = 0
for i = 1, #KEYS do
  local args = members[i]
  if args then
    written = written + 1
    -- unpack is bounded by Lua's stack (LUAI_MAXCSTACK 8000): at most 3,000 members a call.
    for from = 1, #args, 6000 do
      redis.call('ZADD', KEYS[i], 'XX', unpack(args, from, math.min(from + 5999, #args)))
    end
  end
end
return written
