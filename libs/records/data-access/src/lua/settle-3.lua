#!lua
--[[
  Settles a record's publication (RecordStore.settle): sets its final state, 'published' (the
  transaction reached the chain) or 'failed' (rejected for good), and removes it from the
  outbox. Idempotent.

  KEYS[1] record hash   (records:rec:<txId>)
  KEYS[2] outbox zset   (records:outbox)
  KEYS[3] chain list    (records:chain:<chainId>) of the chain the caller expects the record in;
                        read only when the record has a successor

  ARGV[1] txId
  ARGV[2] state: 'published' or 'failed'
  ARGV[3] failure description ('' when published)
  ARGV[4] time (milliseconds since the epoch; hashes written before hold ISO 8601)
  ARGV[5] at most this many successors returned
  ARGV[6] chainId of KEYS[3]

  Returns {changed, successor...}: changed 1 when the state changed, 0 when it was already final
  or the record is unknown; then, when this call settled the record, its successors still
  pending, in chain order (nextTxId, its nextTxId, ...; up to ARGV[5]). Read in the same script
  as the state change: a successor's publisher that saw this record unpublished (and left the
  successor waiting) is always reported to this caller, who publishes it ('published') or fails
  it at once ('failed': a successor spends this record's output, which will never exist).

  The successors are the chain list's entries after the record's position (accept-successor
  appends to the list and sets nextTxId in one step), and a record is pending exactly while it is
  in the outbox (accept adds both, this script removes both, revive puts both back): so the walk
  reads only KEYS[3] and KEYS[2], keys known before the call, never a successor's hash.

  Returns {'CHAIN', chainId}, having changed nothing, when the record is pending, has a successor
  and belongs to another chain than ARGV[6]: the caller calls again with that chain's list.
]]
local current = redis.call('HMGET', KEYS[1], 'state', 'nextTxId', 'chainId', 'position')
local state = current[1]
local settles = state and state ~= 'published' and state ~= 'failed'
local limit = tonumber(ARGV[5])
local walks = settles and current[2] and current[2] ~= '' and limit > 0
-- A chain's create stores no chainId (it is its own txId) and no position (0).
local chainId = current[3] or ARGV[1]
if walks and chainId ~= ARGV[6] then
  return { 'CHAIN', chainId }
end
-- Every read before the first write: on the source of a slot being migrated, Redis aborts a
-- script that touches a key it finds missing (one the ZREM below may have emptied) and keeps the
-- writes made before the abort; read first, and an abort leaves nothing half done.
local out = { 1 }
if walks then
  local pos = tonumber(current[4] or '0')
  local successors = redis.call('LRANGE', KEYS[3], pos + 1, pos + limit)
  for i = 1, #successors do
    if not redis.call('ZSCORE', KEYS[2], successors[i]) then
      break
    end
    out[#out + 1] = successors[i]
  end
end
redis.call('ZREM', KEYS[2], ARGV[1])
if not settles then
  return { 0 }
end
if ARGV[3] == '' then
  redis.call('HSET', KEYS[1], 'state', ARGV[2], 'settledAt', ARGV[4])
else
  redis.call('HSET', KEYS[1], 'state', ARGV[2], 'failure', ARGV[3], 'settledAt', ARGV[4])
end
return out
