#!lua
--[[
  Adds UTXOs another shard's notes (`moving` there) send to this shard, as free, each at most
  once: an outpoint this shard already saw arrive (`arrived`), or already tracks, is skipped. The
  marker stays until the caller has dropped the note at the source (then the marker), so a
  finisher killed after this script and before dropping the note, and the finisher that comes
  after it, do not add a UTXO twice, even one spent and settled here in between.

  KEYS[1..3] free, sats and counters, as wallet-add-3.lua
  KEYS[4]    arrived hash  (wallet:arrived)
  ARGV[1..]  outpoint, satoshis pairs

  Returns the number of outpoints added.
]]
local added = 0
for i = 1, #ARGV, 2 do
  if redis.call('HSETNX', KEYS[4], ARGV[i], '1') == 1 then
    added = added + add_free(KEYS[1], KEYS[2], KEYS[3], ARGV[i], ARGV[i + 1])
  end
end
return added
