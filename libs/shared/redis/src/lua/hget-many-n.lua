#!lua
--[[
  One field of each of many hashes in one command: HGET KEYS[i] ARGV[i], in order (nil where
  absent). For one Redis, where a script may touch keys of any slot (the txId index's lookups
  of a batch over many buckets: one command instead of one HMGET per bucket); a Redis Cluster
  sends one HMGET per key instead.
]]
local out = {}
for i = 1, #KEYS do
  out[i] = redis.call('HGET', KEYS[i], ARGV[i])
end
return out
