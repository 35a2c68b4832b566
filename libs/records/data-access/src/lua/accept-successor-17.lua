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
  KEYS[15] the chain's create record hash (records:rec:<chainId>; holds `minedPos`, see below)
  KEYS[16] confirmed index      (the proof store's HASH whose fields are the 32 raw bytes of every
                                 txId with a stored proof: chain-arc's inclusions)
  KEYS[17] EF extension         (records:ef:<txId>; STRING, binary; written only when ARGV[16] is not empty)

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
  ARGV[17..] field, value pairs of the new record (position is set here)

  Returns 'OK' or one of: 'TX_NOT_FOUND' (no previous record), 'WRONG_FAMILY' (previous is not
  linked), 'TOKEN_INVALID', 'FORBIDDEN' (no token, other tenant), 'NOT_END' (previous is a
  delete or already has a successor), 'CHAIN_DEPTH' (the chain already holds ARGV[15]
  unconfirmed versions: one more would near the node's ancestor limit), 'CHAIN_MISMATCH',
  'EXISTS' (txId already stored),
  'BACKPRESSURE' (the outbox is full: publication lags too far behind), 'LEASE_LOST' (a funding
  input is no longer leased by this write) or 'TAKEN' (a funding input taken from free is no
  longer free): after either, build again and never publish this transaction.
  Nothing changes in any refusal.

  Unconfirmed depth: a version is confirmed when its txId has a stored proof, and a confirmed
  version's predecessors are confirmed too (each spends the one before it), so the chain's
  confirmed versions are positions 0..M and its unconfirmed ones M+1..end. The create record
  caches a confirmed position as `minedPos` (one field per chain; -1 when absent), so end -
  minedPos bounds the unconfirmed count from above: below ARGV[15] the successor is accepted
  with one HGET. At the cap, M is looked up by binary search over the last ARGV[15] positions
  (about log2(ARGV[15]) + 1 proof lookups, each decoding a txId from hex; the cache plays no
  part), and an accepted successor stores it. A cached version whose proof was dropped (its
  block left the chain) is noticed at that lookup only: until then such a chain may hold up to
  the versions of the dropped blocks more than ARGV[15] (the limit keeps a margin below the
  node's for this).
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
    -- The cached bound reached the cap: look up M, among the last ARGV[15] positions only (below
    -- them the answer is the same: at least ARGV[15] unconfirmed, all of them on a shorter chain).
    local function confirmed(pos)
      local txId = redis.call('LINDEX', KEYS[4], pos)
      if not txId then
        return false
      end
      local raw = string.gsub(txId, '%x%x', function(h)
        return string.char(tonumber(h, 16))
      end)
      return redis.call('HEXISTS', KEYS[16], raw) == 1
    end
    -- Invariant: lo is confirmed (or the window's floor), every position above hi unconfirmed.
    -- The cached position is at or below the floor here, so the search never trusts it.
    local lo = math.max(-1, endPos - cap)
    local hi = endPos
    local found = false
    while lo < hi do
      local mid = math.floor((lo + hi + 1) / 2)
      if confirmed(mid) then
        lo = mid
        found = true
      else
        hi = mid - 1
      end
    end
    if endPos - lo >= cap then
      return 'CHAIN_DEPTH'
    end
    if found then
      minedPos = lo
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
for i = 17, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
fields[#fields + 1] = 'position'
fields[#fields + 1] = tostring(tonumber(prev[7] or '0') + 1)
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('SET', KEYS[14], ARGV[14])
if ARGV[16] ~= '' then
  redis.call('SET', KEYS[17], ARGV[16])
end
redis.call('HSET', KEYS[3], 'nextTxId', ARGV[1])
if minedPos then
  redis.call('HSET', KEYS[15], 'minedPos', tostring(minedPos))
end
redis.call('RPUSH', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
pool_apply(KEYS, 5, ARGV, 7)
return 'OK'
