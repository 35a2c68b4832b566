--[[
  Puts a record in the webhook watch set when its tenant has webhooks (WebhookStore.watchRecord).
  One round trip on the publication path; a tenant without webhooks costs one HGET and one EXISTS.

  KEYS[1] record hash (records lib: its field 'tenant')
  KEYS[2] watch zset

  ARGV[1] prefix of the tenant zset keys (the tenant is appended)
  ARGV[2] txId
  ARGV[3] first look (ms)

  Returns 1 when watched (or already watched), 0 when the record is unknown or its tenant has no webhooks.
]]
local tenant = redis.call('HGET', KEYS[1], 'tenant')
if not tenant then
  return 0
end
if redis.call('EXISTS', ARGV[1] .. tenant) == 0 then
  return 0
end
redis.call('ZADD', KEYS[2], 'NX', ARGV[3], ARGV[2])
return 1
