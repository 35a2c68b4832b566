#!lua
--[[
  Creates an API key atomically, holding the tenant's key limit.

  KEYS[1] entity HASH            (<prefix>:{idty}:identity:key:<id>)
  KEYS[2] hash -> id index HASH  (<prefix>:{idty}:identity:key-by-hash)
  KEYS[3] tenant key ZSET        (<prefix>:{idty}:identity:tenant:<tenant>:keys)

  ARGV[1] key id
  ARGV[2] key hash (sha256 hex)
  ARGV[3] deadline, ms since epoch in Redis TIME; 0 = none. Past it the key is NOT created:
          the caller has given up waiting and will never hand out the raw key.
  ARGV[4] limit on the tenant's ZSET size; 0 = none (bootstrap and legacy import)
  ARGV[5] ZSET score (createdAt, ms)
  ARGV[6..] entity field, value pairs

  Returns {outcome, id}:
    'created'     written now
    'exists'      this id already holds this hash (a retried job): nothing written
    'conflict'    the id or the hash belongs to another key (id = the owner's id)
    'late'        the deadline has passed: nothing written
    'limit'       the tenant holds `limit` keys already: nothing written
]]
local existingHash = redis.call('HGET', KEYS[1], 'keyHash')
if existingHash then
  if existingHash == ARGV[2] then return {'exists', ARGV[1]} end
  return {'conflict', ARGV[1]}
end
local owner = redis.call('HGET', KEYS[2], ARGV[2])
if owner then return {'conflict', owner} end

local deadline = tonumber(ARGV[3])
if deadline > 0 then
  local t = redis.call('TIME')
  local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if nowMs > deadline then return {'late', ARGV[1]} end
end

local limit = tonumber(ARGV[4])
if limit > 0 and redis.call('ZCARD', KEYS[3]) >= limit then return {'limit', ARGV[1]} end

local fields = {}
for i = 6, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[3], tonumber(ARGV[5]), ARGV[1])
return {'created', ARGV[1]}
