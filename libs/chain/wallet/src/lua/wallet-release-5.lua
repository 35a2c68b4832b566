#!lua
--[[
  Returns leased UTXOs to free: for a write that stored nothing (validation failed, the accept
  script refused, the builder threw). Only leases held by ARGV[1] are released; others (expired
  and re-reserved by another writer, or already committed) are left alone.

  KEYS[1] free zset        (wallet:free)
  KEYS[2] leases zset      (wallet:leases)
  KEYS[3] owners hash      (wallet:owners)
  KEYS[4] sats hash        (wallet:sats)
  KEYS[5] counters hash    (wallet:counters)

  ARGV[1] owner
  ARGV[2..] outpoints

  Returns the number of outpoints released.
]]
local released = 0
for i = 2, #ARGV do
  local op = ARGV[i]
  if redis.call('HGET', KEYS[3], op) == ARGV[1] and redis.call('ZSCORE', KEYS[2], op) then
    unlease(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], op)
    released = released + 1
  end
end
return released
