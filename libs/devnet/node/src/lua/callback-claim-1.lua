#!lua
--[[
  Claims due callback deliveries with a lease, atomically (several node processes never claim
  the same one): every member scored <= now is re-scored to the lease expiry. The claimer
  removes a member once it was delivered (or given up); a claimer that dies leaves it to be
  claimed again when the lease expires (at-least-once delivery).

  KEYS[1] callback-queue  ZSET member JSON -> due time (ms)

  ARGV[1] now (ms)
  ARGV[2] lease expiry (ms)
  ARGV[3] most members to claim

  Returns the claimed members.
]]
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[2], member)
end
return due
