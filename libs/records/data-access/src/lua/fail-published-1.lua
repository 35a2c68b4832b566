#!lua
--[[
  Marks a published record failed after the fact (RecordStore.failPublished): ARC reported its
  transaction REJECTED or DOUBLE_SPEND_ATTEMPTED while the service was waiting for its proof.
  Pending records are settled by settle-3.lua instead; a failed record stays as it is.

  KEYS[1] record hash

  ARGV[1] failure description
  ARGV[2] time (milliseconds since the epoch; hashes written before hold ISO 8601)

  Returns 1 when the state changed, 0 otherwise (unknown, pending or already failed).
]]
if redis.call('HGET', KEYS[1], 'state') ~= 'published' then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'failed', 'failure', ARGV[1], 'settledAt', ARGV[2])
return 1
