#!lua
--[[
  Accepts a linked update or delete: checks that the previous record may be linked to, reserves
  its link (sets its nextTxId), stores the new record and its raw transaction, appends it to the
  chain's index list, adds it to the publication outbox and commits its funding in the wallet's
  pool (leased or free inputs -> spent by txId, change -> pending), all atomically. Of concurrent
  successors of one record exactly one gets 'OK'. The pool's commit contract (`pool_check`,
  `pool_apply`) is the prelude of this script (chain-wallet `poolCommitLua()`). Every key is in the
  chain's partition (`<prefix>:{<unit>}:…`), one slot on a Redis Cluster, except KEYS[17] on one
  Redis with several partitions (the txId index bucket, as in accept-root-15.lua).

  KEYS[1] new record hash       (records:rec:<txId>)
  KEYS[2] outbox zset           (records:outbox)
  KEYS[3] previous record hash  (records:rec:<prevTxId>)
  KEYS[4] chain list            (records:chain:<chainId>)
  KEYS[5..13] the pool's commit keys (FundingPool.commitKeys(txId))
  KEYS[14] raw transaction      (records:tx:<txId>; STRING, binary, beside the hash as in accept-root)
  KEYS[15] the chain's create record hash (records:rec:<chainId>; holds `minedPos`, see below)
  KEYS[16] EF extension         (records:ef:<txId>; STRING, binary; written only when ARGV[16] is not empty)
  KEYS[17] the txId index bucket written with the record (one Redis, several partitions), else
           KEYS[1] again (never written: ARGV[18] is ''); as in accept-root-15.lua

  ARGV[1] txId of the new record
  ARGV[2] outbox score (acceptance time, ms)
  ARGV[3] chainId the caller read from the previous record
  ARGV[4] sha256 hex of the supplied updateToken, or '' when none was supplied
  ARGV[5] caller's tenant (must own the chain when no token is supplied)
  ARGV[6] most records the outbox may hold (back-pressure); '0' = no limit
  ARGV[7..13] the pool's commit args (FundingPool.commitArgs(...))
  ARGV[14] the raw transaction (bytes)
  ARGV[15] most unconfirmed versions the chain may hold (MAX_UNCONFIRMED_LINKS); '0' = no limit
  ARGV[16] what Extended Format adds to the raw transaction (per input: satoshis and script spent), or ''
  ARGV[17] the newest confirmed position the caller found among the last ARGV[15] positions after
           a 'CHECK_DEPTH' answer (-1 for none), or '' on a first call
  ARGV[18] the record's txId index field, or '' when this script writes no index entry
  ARGV[19] the index value (the partition's encoded unit)
  ARGV[20..] field, value pairs of the new record (position is set here)

  Returns 'OK' or one of: 'TX_NOT_FOUND' (no previous record), 'WRONG_FAMILY' (previous is not
  linked), 'TOKEN_INVALID', 'FORBIDDEN' (no token, other tenant), 'NOT_END' (previous is a
  delete or already has a successor), 'CHAIN_DEPTH' (the chain already holds ARGV[15]
  unconfirmed versions: one more would near the node's ancestor limit), 'CHAIN_MISMATCH',
  'EXISTS' (txId already stored), {'CHECK_DEPTH', floor, txId...} (see below),
  'BACKPRESSURE' (the outbox is full: publication lags too far behind), 'LEASE_LOST' (a funding
  input is no longer leased by this write) or 'TAKEN' (a funding input taken from free is no
  longer free): after either, build again and never publish this transaction.
  Nothing changes in any refusal.

  Unconfirmed depth: a version is confirmed when its txId has a stored proof, and a confirmed
  version's predecessors are confirmed too (each spends the one before it), so the chain's
  confirmed versions are positions 0..M and its unconfirmed ones M+1..end. The create record
  caches a confirmed position as `minedPos` (one field per chain; -1 when absent), so end -
  minedPos bounds the unconfirmed count from above: below ARGV[15] the successor is accepted
  with one HGET. At the cap, M must be looked up in the proof store, which is another unit (the
  `arc` tag, another slot): this script cannot read it. With ARGV[17] = '' it answers
  {'CHECK_DEPTH', floor, txId...}, having changed nothing: floor = end - ARGV[15] and the txIds at
  positions floor+1..end. The caller (RecordStore.acceptSuccessor) finds M among them with one
  read of the proof store (confirmed-count-1.lua: a binary search, about log2(ARGV[15]) + 1
  lookups) and calls again with ARGV[17] = M (-1 when none of them is confirmed; it answers
  CHAIN_DEPTH itself then). Positions never change (the chain list only grows), so M found for
  these positions holds for the second call whatever happened between: if the chain grew, the
  previous record is no longer its end (NOT_END). An accepted successor stores M. A cached
  version whose proof was dropped (its block left the chain) is noticed at that lookup only:
  until then such a chain may hold up to the versions of the dropped blocks more than ARGV[15]
  (the limit keeps a margin below the node's for this).
]]
if redis.call('EXISTS', KEYS[3]) == 0 then
  return 'TX_NOT_FOUND'
end
local prev = redis.call('HMGET', KEYS[3], 'family', 'kind', 'chainId', 'tokenHash', 'tenant', 'nextTxId', 'position')
if prev[1] ~= 'linked' then
  return 'WRONG_FAMILY'
end
-- A chain's create stores no chainId (it is its own txId, the tail of its key) and no position (0).
if (prev[3] or string.sub(KEYS[3], -64)) ~= ARGV[3] then
  return 'CHAIN_MISMATCH'
end
if ARGV[4] ~= '' then
  if prev[4] ~= ARGV[4] then
    return 'TOKEN_INVALID'
  end
elseif prev[5] ~= ARGV[5] then
  return 'FORBIDDEN'
end
if prev[2] == 'delete' or (prev[6] and prev[6] ~= '') then
  return 'NOT_END'
end
local cap = tonumber(ARGV[15])
local minedPos = nil
if cap > 0 then
  local endPos = tonumber(prev[7] or '0')
  local cached = tonumber(redis.call('HGET', KEYS[15], 'minedPos') or '-1')
  if endPos - cached >= cap then
    -- The cached bound reached the cap (then end - cap >= cached >= -1): below the last ARGV[15]
    -- positions the answer is the same, at least ARGV[15] unconfirmed.
    local floor = endPos - cap
    if ARGV[17] == '' then
      local out = { 'CHECK_DEPTH', floor }
      local ids = redis.call('LRANGE', KEYS[4], floor + 1, endPos)
      for i = 1, #ids do
        out[#out + 1] = ids[i]
      end
      return out
    end
    local found = tonumber(ARGV[17])
    if endPos - found >= cap then
      return 'CHAIN_DEPTH'
    end
    if found > cached then
      minedPos = found
    end
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 'EXISTS'
end
local limit = tonumber(ARGV[6])
if limit > 0 and redis.call('ZCARD', KEYS[2]) >= limit then
  return 'BACKPRESSURE'
end
local refused = pool_check(KEYS, 5, ARGV, 7)
if refused then
  return refused
end
local fields = {}
for i = 20, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
fields[#fields + 1] = 'position'
fields[#fields + 1] = tostring(tonumber(prev[7] or '0') + 1)
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('SET', KEYS[14], ARGV[14])
if ARGV[16] ~= '' then
  redis.call('SET', KEYS[16], ARGV[16])
end
redis.call('HSET', KEYS[3], 'nextTxId', ARGV[1])
if minedPos then
  redis.call('HSET', KEYS[15], 'minedPos', tostring(minedPos))
end
redis.call('RPUSH', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
pool_apply(KEYS, 5, ARGV, 7)
if ARGV[18] ~= '' then
  redis.call('HSET', KEYS[17], ARGV[18], ARGV[19])
end
return 'OK'
