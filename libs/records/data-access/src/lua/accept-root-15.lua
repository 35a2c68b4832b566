#!lua
--[[
  Accepts a record that links to nothing before it (an independent record or a linked create):
  stores the record and, beside it, its raw transaction (binary, its own key: a value over 64
  bytes would turn the record's compact listpack hash into a hashtable at ~3x the memory), adds it to the publication outbox and commits its
  funding in the wallet's pool (leased or free inputs -> spent by txId, change -> pending), atomically.
  The pool's commit contract (`pool_check`, `pool_apply`) is the prelude of this script
  (chain-wallet `poolCommitLua()`, from wallet-commit-9.lua). Every key is in the record's
  partition (`<prefix>:{<unit>}:…`), one slot on a Redis Cluster, except KEYS[15] on one Redis
  with several partitions: the txId index bucket, written here with the record.

  KEYS[1] record hash      (records:rec:<txId>)
  KEYS[2] outbox zset      (records:outbox)
  KEYS[3] chain list       (records:chain:<txId>; used only when ARGV[3] == '1')
  KEYS[4..12] the pool's commit keys (FundingPool.commitKeys(txId))
  KEYS[13] raw transaction   (records:tx:<txId>; STRING, binary)
  KEYS[14] EF extension      (records:ef:<txId>; STRING, binary; written only when ARGV[13] is not empty)
  KEYS[15] the txId index bucket written with the record (one Redis, several partitions: any key
           goes into a script there), else KEYS[1] again (never written: ARGV[14] is '')

  ARGV[1] txId
  ARGV[2] outbox score (acceptance time, ms)
  ARGV[3] '1' to start a chain (linked create), '0' otherwise
  ARGV[4] most records the outbox may hold (back-pressure); '0' = no limit
  ARGV[5..11] the pool's commit args (FundingPool.commitArgs(...))
  ARGV[12] the raw transaction (bytes)
  ARGV[13] what Extended Format adds to it (per input: satoshis and script spent), or ''
  ARGV[14] the record's txId index field, or '' when this script writes no index entry (one
           partition keeps no index; on a Redis Cluster the bucket is in another slot, written
           by the caller before this script)
  ARGV[15] the index value (the partition's encoded unit)
  ARGV[16..] field, value pairs of the record hash

  Returns 'OK', 'EXISTS' when a record (or a pool commit) with this txId is already stored,
  'BACKPRESSURE' when the outbox is full (publication lags too far behind), 'LEASE_LOST' when
  a funding input is no longer leased by this write (its lease expired), or 'TAKEN' when a
  funding input taken from free is no longer free (another writer has it); after either of the
  last two, build again and never publish this transaction. Nothing changed in any refusal.
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 'EXISTS'
end
local limit = tonumber(ARGV[4])
if limit > 0 and redis.call('ZCARD', KEYS[2]) >= limit then
  return 'BACKPRESSURE'
end
local refused = pool_check(KEYS, 4, ARGV, 5)
if refused then
  return refused
end
local fields = {}
for i = 16, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('SET', KEYS[13], ARGV[12])
if ARGV[13] ~= '' then
  redis.call('SET', KEYS[14], ARGV[13])
end
if ARGV[3] == '1' then
  redis.call('RPUSH', KEYS[3], ARGV[1])
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
pool_apply(KEYS, 4, ARGV, 5)
if ARGV[14] ~= '' then
  redis.call('HSET', KEYS[15], ARGV[14], ARGV[15])
end
return 'OK'
