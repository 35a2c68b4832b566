--[[
  Accepts a linked update or delete: checks that the previous record may be linked to, reserves
  its link (sets its nextTxId), stores the new record and its raw transaction, appends it to the
  chain's index list, adds it to the publication outbox and commits its funding in the wallet's
  pool (leased or free inputs -> spent by txId, change -> pending), all atomically. Of concurrent
  successors of one record exactly one gets 'OK'. The pool's commit contract (`pool_check`,
  `pool_apply`) is the prelude of this script (chain-wallet `poolCommitLua()`).

  KEYS[1] new record hash       (records:rec:<txId>)
  KEYS[2] outbox zset           (records:outbox)
  KEYS[3] previous record hash  (records:rec:<prevTxId>)
  KEYS[4] chain list            (records:chain:<chainId>)
  KEYS[5..13] the pool's commit keys (FundingPool.commitKeys(txId))
  KEYS[14] raw transaction      (records:tx:<txId>; STRING, binary, beside the hash as in accept-root)
  KEYS[15] EF extension         (records:ef:<txId>; STRING, binary; written only when ARGV[15] is not empty)

  ARGV[1] txId of the new record
  ARGV[2] outbox score (acceptance time, ms)
  ARGV[3] chainId the caller read from the previous record
  ARGV[4] sha256 hex of the supplied updateToken, or '' when none was supplied
  ARGV[5] caller's tenant (must own the chain when no token is supplied)
  ARGV[6] most records the outbox may hold (back-pressure); '0' = no limit
  ARGV[7..13] the pool's commit args (FundingPool.commitArgs(...))
  ARGV[14] the raw transaction (bytes)
  ARGV[15] what Extended Format adds to it (per input: satoshis and script spent), or ''
  ARGV[16..] field, value pairs of the new record (position is set here)

  Returns 'OK' or one of: 'TX_NOT_FOUND' (no previous record), 'WRONG_FAMILY' (previous is not
  linked), 'TOKEN_INVALID', 'FORBIDDEN' (no token, other tenant), 'NOT_END' (previous is a
  delete or already has a successor), 'CHAIN_MISMATCH', 'EXISTS' (txId already stored),
  'BACKPRESSURE' (the outbox is full: publication lags too far behind), 'LEASE_LOST' (a funding
  input is no longer leased by this write) or 'TAKEN' (a funding input taken from free is no
  longer free): after either, build again and never publish this transaction.
  Nothing changes in any refusal.
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
for i = 16, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
fields[#fields + 1] = 'position'
fields[#fields + 1] = tostring(tonumber(prev[7] or '0') + 1)
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('SET', KEYS[14], ARGV[14])
if ARGV[15] ~= '' then
  redis.call('SET', KEYS[15], ARGV[15])
end
redis.call('HSET', KEYS[3], 'nextTxId', ARGV[1])
redis.call('RPUSH', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
pool_apply(KEYS, 5, ARGV, 7)
return 'OK'
