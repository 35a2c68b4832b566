#!lua
--[[
  Adds UTXOs another shard's notes (`moving` there) send to this shard, as free, each at most
  once: an outpoint this shard already saw arrive (`arrived`), or already tracks, is skipped. The
  marker stays until the caller has dropped the note at the source (then the marker), so a
  finisher killed after this script and before dropping the note, and the finisher that comes
  after it, do not add a UTXO twice, even one spent and settled here in between.

  KEYS[1] free zset        (wallet:free)
  KEYS[2] sats hash        (wallet:sats)
  KEYS[3] counters hash    (wallet:counters)
  KEYS[4] arrived hash     (wallet:arrived)

  ARGV[1..] outpoint, satoshis pairs

  Returns the number of outpoints added.
]]
local added = 0
for i = 1, #ARGV, 2 do
  local op, sats = ARGV[i], ARGV[i + 1]
  if redis.call('HSETNX', KEYS[4], op, '1') == 1 and redis.call('HSETNX', KEYS[2], op, sats) == 1 then
    redis.call('ZADD', KEYS[1], sats, op)
    redis.call('HINCRBY', KEYS[3], 'freeCount', 1)
    redis.call('HINCRBY', KEYS[3], 'freeSats', sats)
    added = added + 1
  end
end
return added
