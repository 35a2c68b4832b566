#!lua
--[[
  Adds UTXOs paying the funding key to the pool as free (deposits, coinbase imports, tests).
  An outpoint the pool already tracks in any state (free, leased, pending, spent) is skipped,
  so importing the same deposit twice never funds two transactions with it.

  KEYS[1] free zset        (wallet:free)
  KEYS[2] sats hash        (wallet:sats)
  KEYS[3] counters hash    (wallet:counters)

  ARGV[1..] outpoint, satoshis pairs

  Returns the number of outpoints added.
]]
local added = 0
for i = 1, #ARGV, 2 do
  added = added + add_free(KEYS[1], KEYS[2], KEYS[3], ARGV[i], ARGV[i + 1])
end
return added
