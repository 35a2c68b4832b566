#!lua
--[[
  A failed record whose transaction the chain shows after all (RecordStore.revive): ARC refused
  it, then a poll, a re-broadcast or a callback saw it SEEN_ON_NETWORK or MINED. Its failure is
  cleared (failed -> published), and so is the failure of each successor that failed only because
  of it (failure starting with ARGV[4], never sent): they go back to pending and into the outbox
  (score ARGV[3]) to be published. Idempotent.

  KEYS[1]    record hash  (records:rec:<txId>)
  KEYS[2]    outbox zset  (records:outbox)
  KEYS[3]    chain list   (records:chain:<chainId>) of the chain the caller expects the record in
  KEYS[4..]  the record hashes of the successors the caller expects, in chain order

  ARGV[1]    txId
  ARGV[2]    time (milliseconds since the epoch; hashes written before hold ISO 8601)
  ARGV[3]    outbox score of the successors put back (ms)
  ARGV[4]    failure prefix of a successor failed because of its previous record
  ARGV[5]    at most this many successors put back
  ARGV[6]    chainId of KEYS[3]
  ARGV[7..]  the txIds of KEYS[4..], in the same order

  Returns {changed, successor...}: changed 1 when the record was failed and is published now,
  0 otherwise (unknown, pending, published); then the successors put back, in chain order.

  A script may touch only the keys it was given, so the successors (the chain list's entries
  after the record's position) must be passed by the caller, who learns them from this script:
  when the record has a successor and the walk needs a hash it was not given (another chain than
  ARGV[6], or a successor not in KEYS[4..] in that order), it answers {'RETRY', chainId, txId...}
  with the chain's entries after the record (up to ARGV[5]), having changed nothing; the caller
  calls again with them. The chain only grows, so a second call normally succeeds; the caller
  bounds the retries.
]]
local current = redis.call('HMGET', KEYS[1], 'state', 'nextTxId', 'chainId', 'position')
if current[1] ~= 'failed' then
  return { 0 }
end
local limit = tonumber(ARGV[5])
local prefix = ARGV[4]
-- Read-only first: which successors qualify (each failed because of its previous record, in a
-- row from the record's own successor on). Only then are they changed.
local revived = {}
if current[2] and current[2] ~= '' and limit > 0 then
  -- A chain's create stores no chainId (it is its own txId) and no position (0).
  local chainId = current[3] or ARGV[1]
  if chainId ~= ARGV[6] then
    return { 'RETRY', chainId }
  end
  local pos = tonumber(current[4] or '0')
  local successors = redis.call('LRANGE', KEYS[3], pos + 1, pos + limit)
  for i = 1, #successors do
    if i > #KEYS - 3 or ARGV[6 + i] ~= successors[i] then
      local out = { 'RETRY', chainId }
      for j = 1, #successors do
        out[#out + 1] = successors[j]
      end
      return out
    end
    local successor = redis.call('HMGET', KEYS[3 + i], 'state', 'failure')
    if successor[1] ~= 'failed' or string.sub(successor[2] or '', 1, #prefix) ~= prefix then
      break
    end
    revived[#revived + 1] = i
  end
end
redis.call('HSET', KEYS[1], 'state', 'published', 'settledAt', ARGV[2])
redis.call('HDEL', KEYS[1], 'failure')
local out = { 1 }
for _, i in ipairs(revived) do
  redis.call('HSET', KEYS[3 + i], 'state', 'pending')
  redis.call('HDEL', KEYS[3 + i], 'failure', 'settledAt')
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[6 + i])
  out[#out + 1] = ARGV[6 + i]
end
return out
