-- wrk script: every request POSTs the same random 1 KiB body (application/octet-stream) with the
-- key from env KEY. done() prints one line of figures that bench/write-throughput.sh parses:
--   rps=… p50=…ms p99=…ms requests=… non2xx=… sockerr=…
local body = {}
math.randomseed(os.time())
for i = 1, 1024 do
  body[i] = string.char(math.random(0, 255))
end
wrk.method = "POST"
wrk.body = table.concat(body)
wrk.headers["content-type"] = "application/octet-stream"
wrk.headers["x-api-key"] = os.getenv("KEY") or ""

function done(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format("rps=%.0f p50=%.1fms p99=%.1fms requests=%d non2xx=%d sockerr=%d\n",
    summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, e.status, e.connect + e.read + e.write + e.timeout))
end
