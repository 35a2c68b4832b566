#!lua
--[[
  Stores verified inclusions of one txId shard, lists each txId once under its block in this
  shard, and takes the proven txIds out of the shard's watch set; idempotently. Step 2 of
  ArcProofStore.storeProofs: the block-level data (header, shared top, the block's shard set)
  is written before, under `{arc}`, so no reader finds an inclusion whose block is missing.

  A block's txIds in a shard are one STRING of 32-byte raw txIds appended in arrival order. A txId
  is appended only when its stored inclusion did not already point into that block, so a proof
  stored again (duplicate callbacks, a callback and a poll) adds nothing. Readers
  (arc-block-txids, arc-drop-shard) skip a txId whose inclusion points elsewhere.

  A block being dropped from this shard (its marker exists: arc-drop-shard-4.lua) is refused:
  nothing of its proofs is written and their txIds stay watched, so a store racing a reorg walk
  cannot leave an inclusion behind the walk.

  Variable key count (the caller passes it first); every key is of one shard (one hash tag).

  KEYS[1]        inclusions  HASH txId(32 bytes) -> blockHash(32) .. index .. mask .. nodes
  KEYS[2]        unproven    ZSET txId hex -> first watched (ms)
  KEYS[1 + 2j]   blockTxIds  of the j-th block of this call (j = 1, 2, ...): STRING of 32-byte raw txIds (or a SET)
  KEYS[2 + 2j]   dropping    the j-th block's drop marker in this shard

  ARGV[1..]   quadruples: txId (32 raw bytes), txId hex, j (its block), inclusion value

  Returns one value per quadruple: the block (32 raw bytes) the txId's stored inclusion pointed
  into before this call, '' when it had none, '!' when refused (its block is being dropped).
]]
local types = {}
local refused = {}
local out = {}
for i = 1, #ARGV, 4 do
  local txId, hex, j, value = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  local listKey, markKey = KEYS[1 + 2 * j], KEYS[2 + 2 * j]
  if refused[j] == nil then
    refused[j] = redis.call('EXISTS', markKey) == 1
  end
  if refused[j] then
    out[#out + 1] = '!'
  else
    local current = redis.call('HGET', KEYS[1], txId)
    out[#out + 1] = current and string.sub(current, 1, 32) or ''
    if current ~= value then
      redis.call('HSET', KEYS[1], txId, value)
      if not current or string.sub(current, 1, 32) ~= string.sub(value, 1, 32) then
        types[listKey] = types[listKey] or redis.call('TYPE', listKey)['ok']
        if types[listKey] == 'set' then
          redis.call('SADD', listKey, txId)
        else
          redis.call('APPEND', listKey, txId)
        end
      end
    end
    redis.call('ZREM', KEYS[2], hex)
  end
end
return out
