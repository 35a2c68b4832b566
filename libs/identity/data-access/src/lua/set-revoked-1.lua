#!lua
--[[
  Revokes or re-activates a key of one tenant; idempotent (no change, no event when the key is
  already in the requested state).

  KEYS[1] entity HASH
  ARGV[1] tenant the key must belong to
  ARGV[2] '1' revoke, '0' re-activate
  ARGV[3] now (ISO 8601): revokedAt and updatedAt when something changes
  ARGV[4] invalidation channel
  ARGV[5] key id (the invalidation message)

  Returns 0 when no such key in that tenant, 1 when unchanged, 2 when changed.
]]
local tenant = redis.call('HGET', KEYS[1], 'tenant')
if not tenant or tenant ~= ARGV[1] then return 0 end
local revokedAt = redis.call('HGET', KEYS[1], 'revokedAt')
if ARGV[2] == '1' then
  if revokedAt then return 1 end
  redis.call('HSET', KEYS[1], 'revokedAt', ARGV[3], 'updatedAt', ARGV[3])
else
  if not revokedAt then return 1 end
  redis.call('HDEL', KEYS[1], 'revokedAt')
  redis.call('HSET', KEYS[1], 'updatedAt', ARGV[3])
end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 2
