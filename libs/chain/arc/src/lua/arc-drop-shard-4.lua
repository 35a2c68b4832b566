#!lua
--[[
  One shard's step of a reorg walk (ArcProofStore.dropShard): marks block B as being dropped in
  this shard (a marker with a TTL, which makes arc-store-shard-n.lua refuse proofs into B here),
  deletes every inclusion of this shard that points into B and puts those txIds back in the
  shard's watch set, then deletes the shard's txId list of B. Atomic, and idempotent: run again
  (a walk restarted after a crash) it refreshes the marker and finds nothing more to drop. A txId
  whose stored inclusion already points at another block keeps it.

  KEYS[1] dropping    STRING marker of B in this shard
  KEYS[2] blockTxIds  STRING of this shard's 32-byte raw txIds in B (or a SET)
  KEYS[3] inclusions  HASH txId(32 bytes) -> blockHash(32) .. ...
  KEYS[4] unproven    ZSET txId hex -> first watched (ms)

  ARGV[1] blockHash (32 raw bytes)
  ARGV[2] now (ms): the watch score of the txIds put back
  ARGV[3] the marker's lifetime (ms)

  Returns the txIds (32 raw bytes each) whose inclusions were dropped.
]]
redis.call('SET', KEYS[1], '1', 'PX', ARGV[3])
-- members(key): the block's txIds (block-members.lua, loaded in front of every arc script)
local dropped = {}
for _, txId in ipairs(members(KEYS[2])) do
  local v = redis.call('HGET', KEYS[3], txId)
  if v and string.sub(v, 1, 32) == ARGV[1] then
    redis.call('HDEL', KEYS[3], txId)
    redis.call('ZADD', KEYS[4], 'NX', ARGV[2], (string.gsub(txId, '.', function(c) return string.format('%02x', string.byte(c)) end)))
    dropped[#dropped + 1] = txId
  end
end
redis.call('DEL', KEYS[2])
return dropped
