#!lua
--[[
  GCRA (the generic cell rate algorithm: a token bucket kept as one timestamp) over two buckets at
  once, the caller's key and its tenant. A request is admitted only if both admit it, and only
  then does it consume from both: a refused request costs nothing. Time is Redis TIME, so every
  API process shares one clock.

  KEYS[1] the key's bucket (theoretical arrival time, microseconds)
  KEYS[2] the tenant's bucket
  ARGV[1] key: emission interval in microseconds (1e6 / rate); 0 = no per-key limit
  ARGV[2] key: burst (requests admitted at once from a full bucket)
  ARGV[3] tenant: emission interval in microseconds; 0 = no per-tenant limit
  ARGV[4] tenant: burst

  Output: { admitted (1|0), retryAfterUs, keyRemaining, keyFullInUs, tenantRemaining, tenantFullInUs }
  (retryAfterUs is 0 when admitted; remaining/fullIn are -1 for a bucket that is off)
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local function judge(key, interval, burst)
  if interval <= 0 then return nil end
  local tat = tonumber(redis.call('GET', key) or '0')
  if tat < now then tat = now end
  local newTat = tat + interval
  local allowAt = newTat - interval * burst
  if now < allowAt then
    return { ok = false, wait = allowAt - now, remaining = 0, fullIn = tat - now, key = key, tat = newTat }
  end
  return { ok = true, wait = 0, remaining = math.floor((now - allowAt) / interval), fullIn = newTat - now, key = key, tat = newTat }
end

local k = judge(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
local g = judge(KEYS[2], tonumber(ARGV[3]), tonumber(ARGV[4]))
local admitted = (k == nil or k.ok) and (g == nil or g.ok)
local wait = 0
if not admitted then
  if k ~= nil and not k.ok then wait = k.wait end
  if g ~= nil and not g.ok and g.wait > wait then wait = g.wait end
else
  for _, b in ipairs({ k, g }) do
    if b ~= nil then redis.call('SET', b.key, string.format('%d', b.tat), 'PX', math.floor(b.fullIn / 1000) + 1) end -- key from KEYS (judge's)
  end
end
local function field(b, name) if b == nil then return -1 end return b[name] end
return { admitted and 1 or 0, wait, field(k, 'remaining'), field(k, 'fullIn'), field(g, 'remaining'), field(g, 'fullIn') }
