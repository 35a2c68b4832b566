--[[
  Walks a linked chain from a start record in one round trip, over the chain's index list.

  KEYS[1] start record hash  (records:rec:<txId>)

  ARGV[1] chain list key prefix (records:chain:); the list key is ARGV[1] .. chainId of the start
  ARGV[2] links: positive = later records, negative = earlier ones (non-zero)

  Returns {'OK', endOfLinks (0|1), txId...} ordered moving away from the start (the start
  excluded), or {'TX_NOT_FOUND'} / {'WRONG_FAMILY'}.
]]
local start = redis.call('HMGET', KEYS[1], 'family', 'chainId', 'position')
if not start[1] then
  return { 'TX_NOT_FOUND' }
end
if start[1] ~= 'linked' then
  return { 'WRONG_FAMILY' }
end
-- A chain's create stores no chainId (it is its own txId, the tail of its key) and no position (0).
local list = ARGV[1] .. (start[2] or string.sub(KEYS[1], -64))
local pos = tonumber(start[3] or '0')
local links = tonumber(ARGV[2])
local out = { 'OK', 0 }
if links > 0 then
  local last = redis.call('LLEN', list) - 1
  local to = math.min(pos + links, last)
  if to > pos then
    local ids = redis.call('LRANGE', list, pos + 1, to)
    for i = 1, #ids do
      out[#out + 1] = ids[i]
    end
  end
  if pos + links >= last then
    out[2] = 1
  end
else
  local from = math.max(pos + links, 0)
  if pos > 0 then
    local ids = redis.call('LRANGE', list, from, pos - 1)
    for i = #ids, 1, -1 do
      out[#out + 1] = ids[i]
    end
  end
  if pos + links <= 0 then
    out[2] = 1
  end
end
return out
