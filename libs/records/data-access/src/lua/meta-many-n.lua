#!lua
--[[
  Metadata of many records in one command (GraphQL loaders, navigate pages): one reply instead
  of a pipeline of two commands per record, which costs the client ~4x more CPU per record.

  KEYS[1..]   record hashes (records:rec:<txId>), all in one slot (the caller groups by slot)
  ARGV[1]     '1' to append the length of each record's bytes, '0' for the fields alone
  ARGV[2..]   the field names asked for

  Returns a flat array: per key (in order) the values of the fields (nil where absent), then,
  when ARGV[1] is '1', HSTRLEN of the record's 'bytes' field.
]]
local fields = { unpack(ARGV, 2) }
local n = #fields
local withLength = ARGV[1] == '1'
local out = {}
for i = 1, #KEYS do
  local values = redis.call('HMGET', KEYS[i], unpack(fields))
  for j = 1, n do
    out[#out + 1] = values[j]
  end
  if withLength then
    out[#out + 1] = redis.call('HSTRLEN', KEYS[i], 'bytes')
  end
end
return out
