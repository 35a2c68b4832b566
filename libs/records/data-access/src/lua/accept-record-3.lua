--[[
  Accepts a record that links to nothing before it (an independent record or a linked create):
  stores the record with its raw transaction and adds it to the publication outbox, atomically.

  KEYS[1] record hash      (records:rec:<txId>)
  KEYS[2] outbox zset      (records:outbox)
  KEYS[3] chain list       (records:chain:<txId>; used only when ARGV[3] == '1')

  ARGV[1] txId
  ARGV[2] outbox score (acceptance time, ms)
  ARGV[3] '1' to start a chain (linked create), '0' otherwise
  ARGV[4] most records the outbox may hold (back-pressure); '0' = no limit
  ARGV[5..] field, value pairs of the record hash

  Returns 'OK', 'EXISTS' when a record with this txId is already stored, or 'BACKPRESSURE' when
  the outbox is full (publication lags too far behind); nothing changed in either case.
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 'EXISTS'
end
local limit = tonumber(ARGV[4])
if limit > 0 and redis.call('ZCARD', KEYS[2]) >= limit then
  return 'BACKPRESSURE'
end
local fields = {}
for i = 5, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
redis.call('HSET', KEYS[1], unpack(fields))
if ARGV[3] == '1' then
  redis.call('RPUSH', KEYS[3], ARGV[1])
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 'OK'
