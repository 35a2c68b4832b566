#!lua
--[[
  Forgets a block that left the main chain, and every proof that points into it, atomically.
  A txId whose stored proof already points at another block keeps it. The txIds that lost
  their proof go back to the watch set (waiting), so the tracker proves them again.

  KEYS[1] blockTxIds  STRING of 32-byte raw txIds (a SET in stores written before that layout)
  KEYS[2] inclusions  HASH txId -> blockHash(32) .. ...
  KEYS[3] blocks      HASH blockHash(32 bytes) -> header .. height
  KEYS[4] heights     HASH height -> blockHash hex
  KEYS[5] byHeight    ZSET blockHash hex by height
  KEYS[6] unproven    ZSET txId hex -> first watched (ms)
  KEYS[7] top         HASH of the block's shared top proof nodes (written by storeProofs, read by inclusions)
  KEYS[8] owners      SET of the owners with txIds indexed in the block (arc-index-owner-4.lua)

  ARGV[1] blockHash (32 raw bytes)
  ARGV[2] blockHash (hex)
  ARGV[3] height
  ARGV[4] now (ms): the watch score of the txIds put back

  Returns {'OK', txId...}: the txIds (32 raw bytes each) whose proofs were dropped; or {'OWNERS'},
  with nothing changed, while an owner's index still lists the block: the caller cleans those
  owners (ArcProofStore.dropBlock) and calls again, so no owner's index outlives the proofs it
  points to.
]]
if redis.call('EXISTS', KEYS[8]) == 1 then
  return { 'OWNERS' }
end
-- members(key): the block's txIds (block-members.lua, loaded in front of every arc script)
local dropped = { 'OK' }
for _, txId in ipairs(members(KEYS[1])) do
  local v = redis.call('HGET', KEYS[2], txId)
  if v and string.sub(v, 1, 32) == ARGV[1] then
    redis.call('HDEL', KEYS[2], txId)
    redis.call('ZADD', KEYS[6], 'NX', ARGV[4], (string.gsub(txId, '.', function(c) return string.format('%02x', string.byte(c)) end)))
    dropped[#dropped + 1] = txId
  end
end
redis.call('DEL', KEYS[1], KEYS[7])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[2])
if redis.call('HGET', KEYS[4], ARGV[3]) == ARGV[2] then
  redis.call('HDEL', KEYS[4], ARGV[3])
end
return dropped
