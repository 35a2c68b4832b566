--[[
  Stores verified inclusions and lists each txId once under its block, idempotently.

  A block's txIds are one STRING of 32-byte raw txIds appended in arrival order (~34 bytes a
  txId; a SET costs ~90). A txId is appended only when its stored inclusion did not already point
  into that block, so a proof stored again (duplicate callbacks, a callback and a poll) adds
  nothing. Blocks stored as a SET (before this layout) keep getting SADD. Readers
  (arc-block-txids, arc-drop-block) skip a txId whose inclusion points elsewhere, as before.

  KEYS[1] inclusions  HASH txId(32 bytes) -> blockHash(32) .. index .. mask .. nodes

  ARGV[1] block txIds key prefix (arc:block:); a block's key is ARGV[1] .. blockHash hex
  ARGV[2..] triples: txId (32 raw bytes), blockHash (hex), inclusion value

  Returns the number of inclusions written.
]]
local types = {}
local written = 0
for i = 2, #ARGV, 3 do
  local txId, blockHex, value = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local current = redis.call('HGET', KEYS[1], txId)
  if current ~= value then
    redis.call('HSET', KEYS[1], txId, value)
    written = written + 1
    if not current or string.sub(current, 1, 32) ~= string.sub(value, 1, 32) then
      local key = ARGV[1] .. blockHex
      types[key] = types[key] or redis.call('TYPE', key)['ok']
      if types[key] == 'set' then
        redis.call('SADD', key, txId)
      else
        redis.call('APPEND', key, txId)
      end
    end
  end
end
return written
