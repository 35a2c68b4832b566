#!lua
--[[
  Stores a new webhook unless its tenant already has `limit` (WebhookStore.createWebhook).

  KEYS[1] webhook hash
  KEYS[2] tenant zset of webhook ids

  ARGV[1] webhook id
  ARGV[2] creation time (ms, the zset score)
  ARGV[3] limit
  ARGV[4..] field, value pairs of the hash

  Returns 'OK', or 'LIMIT' when the tenant has `limit` webhooks already (nothing written).
]]
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then
  return 'LIMIT'
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 'OK'
