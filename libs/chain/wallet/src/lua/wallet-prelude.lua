--[[
  The pool's shared state moves, put in front of every wallet-*-N.lua script by the loader
  (funding-pool.ts). A UTXO is in one state at a time (free, leased, pending, spent), and the
  counters hash holds <state>Count and <state>Sats for each: a move updates them with the UTXO.
]]

-- UTXO `op` worth `sats` becomes free unless this shard tracks it already (in any state).
-- Returns 1 when added, else 0.
local function add_free(free, sats_hash, counters, op, sats)
  if redis.call('HSETNX', sats_hash, op, sats) == 0 then
    return 0
  end
  redis.call('ZADD', free, sats, op)
  redis.call('HINCRBY', counters, 'freeCount', 1)
  redis.call('HINCRBY', counters, 'freeSats', sats)
  return 1
end

-- A UTXO worth `sats` leaves `state` in the counters.
local function uncount(counters, state, sats)
  redis.call('HINCRBY', counters, state .. 'Count', -1)
  redis.call('HINCRBY', counters, state .. 'Sats', '-' .. sats)
end

-- UTXO `op` worth `sats` becomes free, from state `was` (the caller has taken it out of that
-- state's own key).
local function to_free(free, counters, op, sats, was)
  redis.call('ZADD', free, sats, op)
  uncount(counters, was, sats)
  redis.call('HINCRBY', counters, 'freeCount', 1)
  redis.call('HINCRBY', counters, 'freeSats', sats)
end

-- Leased UTXO `op` back to free (released by its owner, or its lease expired).
local function unlease(free, leases, owners, sats_hash, counters, op)
  local sats = redis.call('HGET', sats_hash, op)
  redis.call('ZREM', leases, op)
  redis.call('HDEL', owners, op)
  to_free(free, counters, op, sats, 'leased')
end

--[[
  Settles unsettled transaction `txId` of this shard, whose tx hash is `txKey`; K holds the
  shard's keys (free, sats, spent, pending, counters, txs, and moving when outputs are freed)
  and, for the notes, now (ms).
  Each input it still spends is forgotten (spent for good), or made free again when
  `release_inputs`. Each output still pending for it is dropped when not `free_outputs`; else it
  becomes free here or, when the commit named another shard for it (the tx hash's `to`: a shard
  unit or '-' per output, in order), leaves this shard with a note in `moving`
  (outpoint → shard|satoshis|now) that the caller, or a later upkeep, turns into a free UTXO
  there, appended to `notes` (outpoint, note, ...). The tx hash and the txs entry go. Returns
  inputs made free and outputs made free or moved; or -1 when the shard holds no unsettled
  transaction `txId`.
]]
local function settle(K, txKey, txId, release_inputs, free_outputs, notes)
  local tx = redis.call('HMGET', txKey, 'inputs', 'outputs', 'to')
  if not tx[1] then
    return -1, 0
  end
  local released = 0
  for op in string.gmatch(tx[1], '[^,]+') do
    if redis.call('HGET', K.spent, op) == txId then
      local sats = redis.call('HGET', K.sats, op)
      redis.call('HDEL', K.spent, op)
      if release_inputs then
        to_free(K.free, K.counters, op, sats, 'spent')
        released = released + 1
      else
        redis.call('HDEL', K.sats, op)
        uncount(K.counters, 'spent', sats)
      end
    end
  end
  local to = {}
  if free_outputs and tx[3] then
    for unit in string.gmatch(tx[3], '[^,]+') do
      to[#to + 1] = unit
    end
  end
  local freed, i = 0, 0
  for pair in string.gmatch(tx[2] or '', '[^,]+') do
    i = i + 1
    local op = string.sub(pair, 1, string.find(pair, '=', 1, true) - 1)
    if redis.call('HGET', K.pending, op) == txId then
      local sats = redis.call('HGET', K.sats, op)
      redis.call('HDEL', K.pending, op)
      if not free_outputs then
        redis.call('HDEL', K.sats, op)
        uncount(K.counters, 'pending', sats)
      elseif to[i] and to[i] ~= '-' then
        redis.call('HDEL', K.sats, op)
        uncount(K.counters, 'pending', sats)
        local note = to[i] .. '|' .. sats .. '|' .. K.now
        redis.call('HSET', K.moving, op, note)
        notes[#notes + 1] = op
        notes[#notes + 1] = note
        freed = freed + 1
      else
        to_free(K.free, K.counters, op, sats, 'pending')
        freed = freed + 1
      end
    end
  end
  redis.call('DEL', txKey)
  redis.call('ZREM', K.txs, txId)
  return released, freed
end
