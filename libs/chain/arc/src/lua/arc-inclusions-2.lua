--[[
  Stored inclusions of many txIds with their block records and the shared top nodes of their
  proofs, in one round trip.

  KEYS[1] inclusions  HASH txId(32 bytes) -> blockHash(32) .. index u32le .. mask u32le .. depth u8 .. inline nodes
                      (older values: no depth byte, every node inline: 40 + 32·depth bytes)
  KEYS[2] blocks      HASH blockHash(32 bytes) -> header(80) .. height(4)

  ARGV[1] block top key prefix (arc:top:); a block's key is ARGV[1] .. blockHash hex
          HASH level u8 .. sibling position u32le -> node (32 bytes)
  ARGV[2..n+1] txIds (32 raw bytes each)

  Returns a flat array of 3n bulk strings: per txId its inclusion, its block record and its top
  nodes (the non-duplicate levels above the ones inline, in level order, 32 bytes each; "" for an
  older value), or "", "", "" when no proof is stored. How many levels are inline is read from
  the value's length, so values written with another number of shared levels read the same. A
  missing top node ends that txId's top nodes early (the reader refuses the proof as damaged).
]]
-- A block's top nodes, read once per block and call (HGETALL: at most 126 fields) however many of its records are asked.
local tops = {}
local function topOf(blockHash)
  local t = tops[blockHash]
  if not t then
    t = {}
    local key = ARGV[1] .. (string.gsub(blockHash, '.', function(c) return string.format('%02x', string.byte(c)) end))
    local flat = redis.call('HGETALL', key)
    for j = 1, #flat, 2 do
      t[flat[j]] = flat[j + 1]
    end
    tops[blockHash] = t
  end
  return t
end

local out = {}
for i = 2, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  local b = v and redis.call('HGET', KEYS[2], string.sub(v, 1, 32))
  if v and b then
    local top = ''
    if (#v - 40) % 32 ~= 0 then
      local index = struct.unpack('<I4', v, 33)
      local mask = struct.unpack('<I4', v, 37)
      local depth = string.byte(v, 41)
      local t = topOf(string.sub(v, 1, 32))
      local have = {}
      for level = (#v - 41) / 32, depth - 1 do
        local step = 2 ^ level
        if math.floor(mask / step) % 2 == 0 then
          local position = math.floor(index / step)
          local sibling = position % 2 == 0 and position + 1 or position - 1
          local node = t[string.char(level) .. struct.pack('<I4', sibling)]
          if not node then break end
          have[#have + 1] = node
        end
      end
      top = table.concat(have)
    end
    out[#out + 1] = v
    out[#out + 1] = b
    out[#out + 1] = top
  else
    out[#out + 1] = ''
    out[#out + 1] = ''
    out[#out + 1] = ''
  end
end
return out
