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
  ARGV[5] record key prefix (records:rec:), to walk the successors
  ARGV[6] at most this many successors returned

  Returns {changed, successor...}: changed 1 when the state changed, 0 when it was already final
  or the record is unknown; then, when this call settled the record, its successors still
  pending, in chain order (nextTxId, its nextTxId, ...; up to ARGV[6]). Read in the same script
  as the state change: a successor's publisher that saw this record unpublished (and left the
  successor waiting) is always reported to this caller, who publishes it ('published') or fails
  it at once ('failed': a successor spends this record's output, which will never exist).
]]
local current = redis.call('HMGET', KEYS[1], 'state', 'nextTxId')
local state = current[1]
redis.call('ZREM', KEYS[2], ARGV[1])
if not state or state == 'published' or state == 'failed' then
  return {0}
end
if ARGV[3] == '' then
  redis.call('HSET', KEYS[1], 'state', ARGV[2], 'settledAt', ARGV[4])
else
  redis.call('HSET', KEYS[1], 'state', ARGV[2], 'failure', ARGV[3], 'settledAt', ARGV[4])
end
local out = {1}
local limit = tonumber(ARGV[6])
local next = current[2]
while next and #out <= limit do
  local successor = redis.call('HMGET', ARGV[5] .. next, 'state', 'nextTxId')
  if successor[1] ~= 'pending' then
    break
  end
  out[#out + 1] = next
  next = successor[2]
end
return out
