-- Shared by the devnet's block-writing scripts, commit-block-9.lua and reorg-tip-8.lua (loaded in
-- front of every devnet script by commands.ts; not a command itself: its name has no key count).
-- Both take their block's arguments in the same form (commands.ts, blockTxArgs).

-- storeMined(mined, first, n): each of the block's n transactions' "blockHash|height|index|nodes",
-- from ARGV[first + 2i] (txId) and ARGV[first + 2i + 1] (value), i = 0 .. n-1.
local function storeMined(mined, first, n)
  for i = 0, n - 1 do
    redis.call('HSET', mined, ARGV[first + 2 * i], ARGV[first + 2 * i + 1])
  end
end

-- storeBlock(tip, headers, heights, hashes, blockTxIds, hash, height, time, header, txIds): the
-- block's header, height, place at its height and txIds (comma separated), then the tip moved to it.
local function storeBlock(tip, headers, heights, hashes, blockTxIds, hash, height, time, header, txIds)
  redis.call('HSET', headers, hash, header)
  redis.call('HSET', heights, hash, height)
  redis.call('HSET', hashes, height, hash)
  redis.call('HSET', blockTxIds, hash, txIds)
  redis.call('HSET', tip, 'hash', hash, 'height', height, 'time', time)
end
