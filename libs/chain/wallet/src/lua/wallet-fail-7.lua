#!lua
--[[
  Settles a transaction ARC definitively rejected: its pending outputs are dropped (they will
  never exist); its inputs return to free when ARGV[2] is '1' (the transaction never reached
  the network and the rejection does not say the inputs are spent), otherwise they are dropped
  too (wallet-prelude.lua, settle). The caller decides ARGV[2] by the release rules
  (release-rules.ts); an ambiguous outcome MUST NOT call this at all. Idempotent.

  KEYS[1..6] the shard's free, sats, spent, pending, counters and txs (as wallet-confirm-n.lua)
  KEYS[7]    tx hash       (wallet:tx:<txId>)

  ARGV[1] txId
  ARGV[2] '1' to return the inputs to free, '0' to drop them

  Returns the number of inputs returned to free, or -1 when the pool knows no unsettled
  transaction with this txId.
]]
local K = { free = KEYS[1], sats = KEYS[2], spent = KEYS[3], pending = KEYS[4], counters = KEYS[5], txs = KEYS[6] }
return (settle(K, KEYS[7], ARGV[1], ARGV[2] == '1', false))
