#!lua
--[[
  Returns expired leases to free (a writer died between reserve and commit). Safe at any time:
  a lease is either committed (then it is no longer in leases) or expired, never both, because
  commit checks the lease in the same atomic step.

  KEYS[1] free zset        (wallet:free)
  KEYS[2] leases zset      (wallet:leases)
  KEYS[3] owners hash      (wallet:owners)
  KEYS[4] sats hash        (wallet:sats)
  KEYS[5] counters hash    (wallet:counters)

  ARGV[1] now (ms)
  ARGV[2] most leases to return

  Returns the number of leases returned.
]]
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, op in ipairs(expired) do
  unlease(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], op)
end
return #expired
