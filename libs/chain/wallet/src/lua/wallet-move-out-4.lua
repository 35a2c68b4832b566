#!lua
--[[
  Takes free UTXOs out of one shard of the pool so that another shard can add them (upkeep's
  rebalancing: a records partition funds its writes from its own shard). Each UTXO taken leaves
  free, sats and the counters here and is noted in `moving` (outpoint → destination|satoshis|now)
  until the destination has added it (wallet-arrive-4.lua there) and the caller deletes the note;
  a mover that dies in between leaves the note, and a later upkeep finishes the move. A writer
  that sampled one of them commits `TAKEN` (it is not free any more).

  KEYS[1] free zset        (wallet:free)
  KEYS[2] sats hash        (wallet:sats)
  KEYS[3] counters hash    (wallet:counters)
  KEYS[4] moving hash      (wallet:moving)

  ARGV[1] destination (a records partition unit)
  ARGV[2] minimum satoshis (inclusive)
  ARGV[3] maximum satoshis (exclusive), or '+inf'
  ARGV[4] how many at most
  ARGV[5] now (ms)

  Returns {outpoint1, sats1, outpoint2, sats2, ...} of the UTXOs taken.
]]
local max = ARGV[3] == '+inf' and '+inf' or '(' .. ARGV[3]
local found = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], max, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[4]))
for i = 1, #found, 2 do
  local op, sats = found[i], found[i + 1]
  redis.call('ZREM', KEYS[1], op)
  redis.call('HDEL', KEYS[2], op)
  redis.call('HINCRBY', KEYS[3], 'freeCount', -1)
  redis.call('HINCRBY', KEYS[3], 'freeSats', -tonumber(sats))
  redis.call('HSET', KEYS[4], op, ARGV[1] .. '|' .. sats .. '|' .. ARGV[5])
end
return found
