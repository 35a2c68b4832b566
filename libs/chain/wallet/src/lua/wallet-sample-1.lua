#!lua
--[[
  Read-only: a random window of the free UTXOs worth [ARGV[1], ARGV[2]) satoshis, for a writer
  that takes its funding straight from free instead of reserving it first (it commits with owner
  '', see wallet-commit-9.lua, and gets 'TAKEN' when another writer was faster). A random window
  rather than the smallest qualifying UTXOs, so that writers in several processes seldom pick the
  same ones.

  KEYS[1] free zset        (wallet:free)

  ARGV[1] minimum satoshis (inclusive)
  ARGV[2] maximum satoshis (exclusive), or '+inf'
  ARGV[3] how many
  ARGV[4] a fraction in [0, 1) that places the window (a script has no randomness of its own)

  Returns {outpoint1, sats1, outpoint2, sats2, ...}, empty when none qualifies.
]]
local max = ARGV[2] == '+inf' and '+inf' or '(' .. ARGV[2]
local count = tonumber(ARGV[3])
local n = redis.call('ZCOUNT', KEYS[1], ARGV[1], max)
local offset = math.floor(tonumber(ARGV[4]) * math.max(0, n - count))
return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], max, 'WITHSCORES', 'LIMIT', offset, count)
