#!lua
--[[
  Puts a record in the webhook watch set when its tenant has webhooks (WebhookStore.watchRecord).
  One round trip on the publication path; a tenant without webhooks costs one EXISTS.

  The record's tenant is an argument, not read here: the record lives under another hash tag
  (`rec`), and on a Redis Cluster a script touches one slot. The caller knows it (the publisher
  read the record) or reads it first (WebhookStore.recordTenant); a tenant never changes, so the
  two steps need no re-check, and the first writes nothing (a crash in between leaves no state).

  KEYS[1] the tenant's webhook ids (ZSET)
  KEYS[2] watch zset

  ARGV[1] txId
  ARGV[2] first look (ms)

  Returns 1 when watched (or already watched), 0 when the tenant has no webhooks.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('ZADD', KEYS[2], 'NX', ARGV[2], ARGV[1])
return 1
