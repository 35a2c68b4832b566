#!lua
--[[
  The last step of a reorg walk (ArcProofStore.dropBlock): forgets block B's block-level data once
  no owner index lists B and every shard holding inclusions in B has been walked. Until this step
  runs, B stays stored, so a walk that crashed before it is repeated by the next reconcile.

  KEYS[1] blocks   HASH blockHash(32 bytes) -> header .. height
  KEYS[2] heights  HASH height -> blockHash hex
  KEYS[3] byHeight ZSET blockHash hex by height
  KEYS[4] top      HASH of B's shared top proof nodes
  KEYS[5] owners   SET of the owners with txIds indexed in B (arc-index-owner-4.lua)
  KEYS[6] shards   SET of the txId shards holding inclusions in B (storeProofs writes it first)

  ARGV[1] blockHash (32 raw bytes)
  ARGV[2] blockHash (hex)
  ARGV[3] height
  ARGV[4..] the shards this walk has dropped B from (decimal)

  Returns {'OK'}; or, with nothing changed, {'OWNERS'} while an owner's index still lists B, or
  {'SHARDS', shard...} naming shards that gained inclusions in B since the walk read the set: the
  caller cleans or walks those and calls again.
]]
if redis.call('EXISTS', KEYS[5]) == 1 then
  return { 'OWNERS' }
end
local walked = {}
for i = 4, #ARGV do
  walked[ARGV[i]] = true
end
local missing = { 'SHARDS' }
for _, shard in ipairs(redis.call('SMEMBERS', KEYS[6])) do
  if not walked[shard] then
    missing[#missing + 1] = shard
  end
end
if #missing > 1 then
  return missing
end
redis.call('DEL', KEYS[4], KEYS[6])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
if redis.call('HGET', KEYS[2], ARGV[3]) == ARGV[2] then
  redis.call('HDEL', KEYS[2], ARGV[3])
end
return { 'OK' }
