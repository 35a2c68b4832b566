#!lua
--[[
  Commits a transaction against the pool, atomically: its inputs become spent by it and its
  outputs that pay the funding key (change, split outputs) become pending until ARC accepts the
  transaction. The inputs come either from a lease (reserve, then commit: ARGV[2] is the lease
  owner, and nothing changes unless every input is still leased by it) or straight from free
  (ARGV[2] is '': the writer picked them from a sample of the free set without reserving, and
  nothing changes unless every input is still free). Either way no UTXO is ever spent twice.

  The two functions between the BEGIN/END markers are the pool's commit contract; the records
  accept scripts embed them (see README "Committing inside the records accept script"), so a
  record and its funding move in ONE Lua call. They read the pool KEYS from K[k..k+8] and the
  pool ARGV from A[a..a+6]:

  KEYS[1] leases zset      (wallet:leases)
  KEYS[2] owners hash      (wallet:owners)
  KEYS[3] sats hash        (wallet:sats)
  KEYS[4] spent hash       (wallet:spent)
  KEYS[5] pending hash     (wallet:pending)
  KEYS[6] counters hash    (wallet:counters)
  KEYS[7] txs zset         (wallet:txs)
  KEYS[8] tx hash          (wallet:tx:<txId>)
  KEYS[9] free zset        (wallet:free)

  ARGV[1] txId
  ARGV[2] lease owner, or '' for inputs taken straight from free
  ARGV[3] now (ms)
  ARGV[4] inputs: outpoints joined by ','
  ARGV[5] outputs to the funding key: 'outpoint=satoshis' joined by ',' ('' for none)
  ARGV[6] kind ('record', 'split', ...)
  ARGV[7] raw transaction hex to keep for re-broadcast ('' when the caller stores it)
  ARGV[8] (this script only, optional) the shard each output goes to when the transaction is
          confirmed: a records partition unit, or '-' to stay in this one, per output in order,
          joined by ',' (a split's outputs go straight to the shards that need them)

  Returns 'OK', 'EXISTS' (this txId is already committed; nothing changed), 'LEASE_LOST' (an
  input is not leased by this owner any more: it expired and may fund another write) or 'TAKEN'
  (an input taken from free is not free any more: another writer spent or reserved it). On
  'LEASE_LOST' and 'TAKEN' nothing changed, and the caller MUST NOT broadcast and must build
  again with other funding.
]]
-- BEGIN pool_commit
local function pool_check(K, k, A, a)
  if redis.call('EXISTS', K[k + 7]) == 1 then
    return 'EXISTS'
  end
  local from_free = A[a + 1] == ''
  for op in string.gmatch(A[a + 3], '[^,]+') do
    if from_free then
      if not redis.call('ZSCORE', K[k + 8], op) then
        return 'TAKEN'
      end
    elseif redis.call('HGET', K[k + 1], op) ~= A[a + 1] or not redis.call('ZSCORE', K[k], op) then
      return 'LEASE_LOST'
    end
  end
  return false
end

local function pool_apply(K, k, A, a)
  local txId = A[a]
  local from_free = A[a + 1] == ''
  local was = from_free and 'free' or 'leased'
  for op in string.gmatch(A[a + 3], '[^,]+') do
    local sats = redis.call('HGET', K[k + 2], op)
    if from_free then
      redis.call('ZREM', K[k + 8], op)
    else
      redis.call('ZREM', K[k], op)
      redis.call('HDEL', K[k + 1], op)
    end
    redis.call('HSET', K[k + 3], op, txId)
    redis.call('HINCRBY', K[k + 5], was .. 'Count', -1)
    redis.call('HINCRBY', K[k + 5], was .. 'Sats', '-' .. sats)
    redis.call('HINCRBY', K[k + 5], 'spentCount', 1)
    redis.call('HINCRBY', K[k + 5], 'spentSats', sats)
  end
  for pair in string.gmatch(A[a + 4], '[^,]+') do
    local eq = string.find(pair, '=', 1, true)
    local op, sats = string.sub(pair, 1, eq - 1), string.sub(pair, eq + 1)
    redis.call('HSET', K[k + 2], op, sats)
    redis.call('HSET', K[k + 4], op, txId)
    redis.call('HINCRBY', K[k + 5], 'pendingCount', 1)
    redis.call('HINCRBY', K[k + 5], 'pendingSats', sats)
  end
  redis.call('HSET', K[k + 7], 'inputs', A[a + 3], 'outputs', A[a + 4], 'owner', A[a + 1], 'at', A[a + 2], 'kind', A[a + 5])
  if A[a + 6] ~= '' then
    redis.call('HSET', K[k + 7], 'rawHex', A[a + 6])
  end
  redis.call('ZADD', K[k + 6], A[a + 2], txId)
end
-- END pool_commit

local refused = pool_check(KEYS, 1, ARGV, 1)
if refused then
  return refused
end
pool_apply(KEYS, 1, ARGV, 1)
if ARGV[8] and ARGV[8] ~= '' then
  redis.call('HSET', KEYS[8], 'to', ARGV[8])
end
return 'OK'
