#!lua
--[[
  Stores verified inclusions and lists each txId once under its block, idempotently.

  A block's txIds are one STRING of 32-byte raw txIds appended in arrival order (~34 bytes a
  txId; a SET costs ~90). A txId is appended only when its stored inclusion did not already point
  into that block, so a proof stored again (duplicate callbacks, a callback and a poll) adds
  nothing. Blocks stored as a SET (before this layout) keep getting SADD. Readers
  (arc-block-txids, arc-drop-block) skip a txId whose inclusion points elsewhere, as before.

  Variable key count (the caller passes it first): every block key is declared, so on a Redis
  Cluster the script touches only keys of its own slot (all under the `arc` hash tag).

  KEYS[1]     inclusions  HASH txId(32 bytes) -> blockHash(32) .. index .. mask .. nodes
  KEYS[2..]   blockTxIds  one per block of this call (STRING of 32-byte raw txIds, or a SET)

  ARGV[1..]   triples: txId (32 raw bytes), the KEYS index of its block's txIds key, inclusion value

  Returns the number of inclusions written.
]]
local types = {}
local written = 0
for i = 1, #ARGV, 3 do
  local txId, value = ARGV[i], ARGV[i + 2]
  local blockIndex = tonumber(ARGV[i + 1])
  local blockKey = KEYS[blockIndex]
  local current = redis.call('HGET', KEYS[1], txId)
  if current ~= value then
    redis.call('HSET', KEYS[1], txId, value)
    written = written + 1
    if not current or string.sub(current, 1, 32) ~= string.sub(value, 1, 32) then
      types[blockKey] = types[blockKey] or redis.call('TYPE', blockKey)['ok']
      if types[blockKey] == 'set' then
        redis.call('SADD', blockKey, txId)
      else
        redis.call('APPEND', blockKey, txId)
      end
    end
  end
end
return written
