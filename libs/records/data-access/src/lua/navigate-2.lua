#!lua
--[[
  Walks a linked chain from a start record in one round trip, over the chain's index list.

  KEYS[1] start record hash  (records:rec:<txId>)
  KEYS[2] chain list         (records:chain:<chainId>) of the chain the caller expects the start in

  ARGV[1] txId of the start
  ARGV[2] chainId of KEYS[2]
  ARGV[3] links: positive = later records, negative = earlier ones (non-zero)

  Returns {'OK', endOfLinks (0|1), txId...} ordered moving away from the start (the start
  excluded), {'TX_NOT_FOUND'} / {'WRONG_FAMILY'}, or {'CHAIN', chainId} when the start belongs to
  another chain than ARGV[2]: the caller learns it and calls again with that chain's list (a
  script may touch only the keys it was given, so it cannot follow the start's chainId itself).
]]
local start = redis.call('HMGET', KEYS[1], 'family', 'chainId', 'position', 'kind')
-- An independent record stores no family, only its kind.
if not start[1] and not start[4] then
  return { 'TX_NOT_FOUND' }
end
if start[1] ~= 'linked' then
  return { 'WRONG_FAMILY' }
end
-- A chain's create stores no chainId (it is its own txId) and no position (0).
local chainId = start[2] or ARGV[1]
if chainId ~= ARGV[2] then
  return { 'CHAIN', chainId }
end
local pos = tonumber(start[3] or '0')
local links = tonumber(ARGV[3])
local out = { 'OK', 0 }
if links > 0 then
  local last = redis.call('LLEN', KEYS[2]) - 1
  local to = math.min(pos + links, last)
  if to > pos then
    local ids = redis.call('LRANGE', KEYS[2], pos + 1, to)
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
    local ids = redis.call('LRANGE', KEYS[2], from, pos - 1)
    for i = #ids, 1, -1 do
      out[#out + 1] = ids[i]
    end
  end
  if pos + links <= 0 then
    out[2] = 1
  end
end
return out
