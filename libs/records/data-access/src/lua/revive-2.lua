--[[
  A failed record whose transaction the chain shows after all (RecordStore.revive): ARC refused
  it, then a poll, a re-broadcast or a callback saw it SEEN_ON_NETWORK or MINED. Its failure is
  cleared (failed -> published), and so is the failure of each successor that failed only because
  of it (failure starting with ARGV[4], never sent): they go back to pending and into the outbox
  (score ARGV[3]) to be published. Idempotent.

  KEYS[1] record hash
  KEYS[2] outbox zset

  ARGV[1] time (ISO 8601)
  ARGV[2] record key prefix (records:rec:), to walk the successors
  ARGV[3] outbox score of the successors put back (ms)
  ARGV[4] failure prefix of a successor failed because of its previous record
  ARGV[5] at most this many successors put back

  Returns {changed, successor...}: changed 1 when the record was failed and is published now,
  0 otherwise (unknown, pending, published); then the successors put back, in chain order.
]]
local current = redis.call('HMGET', KEYS[1], 'state', 'nextTxId')
if current[1] ~= 'failed' then
  return {0}
end
redis.call('HSET', KEYS[1], 'state', 'published', 'settledAt', ARGV[1])
redis.call('HDEL', KEYS[1], 'failure')
local out = {1}
local limit = tonumber(ARGV[5])
local prefix = ARGV[4]
local next = current[2]
while next and #out <= limit do
  local key = ARGV[2] .. next
  local successor = redis.call('HMGET', key, 'state', 'failure', 'nextTxId')
  if successor[1] ~= 'failed' or string.sub(successor[2] or '', 1, #prefix) ~= prefix then
    break
  end
  redis.call('HSET', key, 'state', 'pending')
  redis.call('HDEL', key, 'failure', 'settledAt')
  redis.call('ZADD', KEYS[2], ARGV[3], next)
  out[#out + 1] = next
  next = successor[3]
end
return out
