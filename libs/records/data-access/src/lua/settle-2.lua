--[[
  Settles a record's publication (RecordStore.settle): sets its final state, 'published' (the
  transaction reached the chain) or 'failed' (rejected for good), and removes it from the
  outbox. Idempotent.

  KEYS[1] record hash
  KEYS[2] outbox zset

  ARGV[1] txId
  ARGV[2] state: 'published' or 'failed'
  ARGV[3] failure description ('' when published)
  ARGV[4] time (ISO 8601)

  Returns 1 when the state changed, 0 when it was already final or the record is unknown.
]]
local state = redis.call('HGET', KEYS[1], 'state')
redis.call('ZREM', KEYS[2], ARGV[1])
if not state or state == 'published' or state == 'failed' then
  return 0
end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'failure', ARGV[3], 'settledAt', ARGV[4])
return 1
