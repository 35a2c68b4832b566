#!lua
--[[
  Deletes a key of one tenant with its indexes (frees its slot under the limit).

  KEYS[1] entity HASH
  KEYS[2] hash -> id index HASH
  KEYS[3] tenant key ZSET
  ARGV[1] tenant the key must belong to
  ARGV[2] key id
  ARGV[3] invalidation channel

  Returns 1 when deleted, 0 when no such key in that tenant.
]]
local tenant = redis.call('HGET', KEYS[1], 'tenant')
if not tenant or tenant ~= ARGV[1] then return 0 end
local keyHash = redis.call('HGET', KEYS[1], 'keyHash')
if keyHash and redis.call('HGET', KEYS[2], keyHash) == ARGV[2] then redis.call('HDEL', KEYS[2], keyHash) end
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[2])
return 1
