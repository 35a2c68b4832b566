#!lua
--[[
  Settles transactions ARC accepted (SEEN_ON_NETWORK or MINED): for each, its pending outputs
  become free and its inputs stop being tracked (they are spent for good). An output its commit
  destined for another shard (a split's, `to` in its tx hash) leaves this shard with a note in
  `moving` instead, for the caller to add there (wallet-prelude.lua, settle). Idempotent: a
  transaction the pool does not hold unsettled is left alone.

  KEYS[1..7] the shard's wallet:free, sats, spent, pending, counters, txs and moving
  KEYS[8..]  tx hashes (wallet:tx:<txId>), one per txId, in the same order

  ARGV[1]    now (ms), for the notes
  ARGV[2..]  txIds

  Returns, per txId in order, the number of outputs made free (or moved to their shard), or -1
  when the pool knows no unsettled transaction with this txId (never committed, or already
  settled); then the notes this call wrote in `moving`: outpoint, note, outpoint, note, ...

  A transaction is unsettled exactly while it is a member of KEYS[6] (commit adds it with its tx
  hash, confirm and fail remove both), so for a batch one ZMSCORE tells which txIds need any work:
  most of a callback batch was confirmed when it was published, and costs no command of its own.
  A single txId reads its tx hash directly (the same one command).
]]
local K = {
  free = KEYS[1], sats = KEYS[2], spent = KEYS[3], pending = KEYS[4],
  counters = KEYS[5], txs = KEYS[6], moving = KEYS[7], now = ARGV[1],
}
local ids = { unpack(ARGV, 2) }
local unsettled = false
if #ids > 1 then
  unsettled = redis.call('ZMSCORE', KEYS[6], unpack(ids))
end
local out, notes = {}, {}
for i = 1, #ids do
  if unsettled and not unsettled[i] then
    out[i] = -1
  else
    local released, freed = settle(K, KEYS[7 + i], ids[i], false, true, notes)
    out[i] = released < 0 and -1 or freed
  end
end
for _, v in ipairs(notes) do
  out[#out + 1] = v
end
return out
