-- wrk script for ONE connection: updates a linked record again and again, each request updating
-- the txId the previous response returned (env START: the create's txId, KEY: the API key).
-- done() prints: rps=… p50=…ms p99=…ms requests=… non2xx=…
local key = os.getenv("KEY") or ""
local tip = os.getenv("START") or ""
local version = 0

function request()
  version = version + 1
  return wrk.format("POST", "/api/v1/linkedrecords/" .. tip .. "/update",
    { ["content-type"] = "application/octet-stream", ["x-api-key"] = key }, "version " .. version)
end

function response(status, headers, body)
  if status == 200 then
    local txId = string.match(body, '"txId"%s*:%s*"(%x+)"')
    if txId then tip = txId end
  end
end

function done(summary, latency, requests)
  io.write(string.format("rps=%.0f p50=%.1fms p99=%.1fms requests=%d non2xx=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.requests, summary.errors.status))
end
