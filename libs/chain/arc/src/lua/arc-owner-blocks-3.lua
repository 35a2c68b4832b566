#!lua
--[[
  One page of an owner's blocks (ArcProofStore.ownerBlocks), newest first: the list is ordered by
  height, then hash, both descending, and cursors are (height, hash) keys, so a page does not
  shift when newer blocks arrive. Read-only.

  KEYS[1] ownerBlocks  ZSET block hash hex by height (this owner)
  KEYS[2] ownerTxIds   HASH block hash hex -> txIds of this owner in that block (32 bytes each)
  KEYS[3] blocks       HASH blockHash(32 bytes) -> header(80) .. height(4)

  ARGV[1] 'first' (from the newest end of the window) or 'last' (from its oldest end)
  ARGV[2] at most this many blocks
  ARGV[3], ARGV[4] 'after' key: height and hash hex ('' '' for none): only blocks older than it
  ARGV[5], ARGV[6] 'before' key: height and hash hex ('' '' for none): only blocks newer than it

  Returns a flat array: the owner's block count, 1 when blocks lie beyond the window on the side
  the page did not start from (the 'after' side for 'first', the 'before' side for 'last') else 0,
  then per block (newest first): hash hex, height, this owner's txIds in it, the block record
  ('' when the block is not stored).
]]
local limit = tonumber(ARGV[2])
local afterH, afterM = tonumber(ARGV[3]), ARGV[4]
local beforeH, beforeM = tonumber(ARGV[5]), ARGV[6]

-- Strictly older than 'after' and strictly newer than 'before'.
local function inWindow(h, m)
  if afterH and not (h < afterH or (h == afterH and m < afterM)) then
    return false
  end
  if beforeH and not (h > beforeH or (h == beforeH and m > beforeM)) then
    return false
  end
  return true
end

local found = {}
local batch = limit + 8
local offset = 0
local top = afterH and tostring(afterH) or '+inf'
local bottom = beforeH and tostring(beforeH) or '-inf'
while #found < limit do
  local flat
  if ARGV[1] == 'first' then
    flat = redis.call('ZRANGE', KEYS[1], top, bottom, 'BYSCORE', 'REV', 'LIMIT', offset, batch, 'WITHSCORES')
  else
    flat = redis.call('ZRANGE', KEYS[1], bottom, top, 'BYSCORE', 'LIMIT', offset, batch, 'WITHSCORES')
  end
  for i = 1, #flat, 2 do
    local m, h = flat[i], tonumber(flat[i + 1])
    if #found < limit and inWindow(h, m) then
      found[#found + 1] = { m, h }
    end
  end
  if #flat < 2 * batch then
    break
  end
  offset = offset + batch
end

-- Blocks beyond the far cursor: 'first' pages are preceded by the 'after' key and what is newer.
local beyond = 0
if ARGV[1] == 'first' and afterH then
  if redis.call('ZCOUNT', KEYS[1], '(' .. afterH, '+inf') > 0 then
    beyond = 1
  else
    for _, m in ipairs(redis.call('ZRANGE', KEYS[1], afterH, afterH, 'BYSCORE')) do
      if m >= afterM then
        beyond = 1
      end
    end
  end
elseif ARGV[1] == 'last' and beforeH then
  if redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. beforeH) > 0 then
    beyond = 1
  else
    for _, m in ipairs(redis.call('ZRANGE', KEYS[1], beforeH, beforeH, 'BYSCORE')) do
      if m <= beforeM then
        beyond = 1
      end
    end
  end
end

local out = { redis.call('ZCARD', KEYS[1]), beyond }
local first, last, step = 1, #found, 1
if ARGV[1] == 'last' then
  first, last, step = #found, 1, -1
end
for i = first, last, step do
  local m, h = found[i][1], found[i][2]
  local raw = string.gsub(m, '%x%x', function(x) return string.char(tonumber(x, 16)) end)
  out[#out + 1] = m
  out[#out + 1] = h
  out[#out + 1] = math.floor(redis.call('HSTRLEN', KEYS[2], m) / 32)
  out[#out + 1] = redis.call('HGET', KEYS[3], raw) or ''
end
return out
