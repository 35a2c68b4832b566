#!/usr/bin/env bash
# Write-path benchmark: Proofline as `npm start` runs it, measured in the same run as the ceiling
# its framework sets on this machine (bare node:http, bare Express 5 answering a 1 KiB POST).
#
#   bash bench/write-throughput.sh            (part of `npm run bench`; run from anywhere)
#
# What it does, in order:
#   1. bare node:http and bare Express 5 (bench/servers/*.mjs), a 1 KiB POST each;
#   2. the compiled service (dist/, built when stale) with NODE_ENV=production, LOG_LEVEL=warn,
#      WORKERS workers, BLOCK_INTERVAL_MS=1000, on a private redis-server with AOF appendfsync
#      everysec: independent SHA256 writes of a 1 KiB body (bench/wrk/post.lua);
#   3. the publication backlog the load left: how long the workers take to publish it all
#      (proofline_records_pending_publication on /metrics), hence "accepted and published";
#   4. Redis memory per accepted record (used_memory after the last block, minus before the
#      load, divided by the records accepted);
#   5. one client updating one linked record sequentially (bench/wrk/linked-updates.lua).
# Load generator: wrk, 1 thread, BENCH_CONNECTIONS connections, a 2 s warm-up that is not
# counted, then BENCH_SECONDS seconds, on the same machine as the service. Absolute figures move
# with the machine and what else runs on it; the ratios on the last line are what to compare.
#
# Every write spends one funding UTXO: the wallet worker keeps POOL_TARGET (20000 here) of them,
# refilled from the devnet node's coinbases (1000 per split, 20 splits per upkeep run).
# Environment: BENCH_SECONDS (10), BENCH_CONNECTIONS (64), WORKERS (2), AUTH_JWT_SECRET (a random
# one when unset: production refuses to start without a token secret), BENCH_PROFILE_DIR (when
# set, every process of the service writes a V8 CPU profile there when it stops).
set -u
bench=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$bench/.." && pwd)
seconds=${BENCH_SECONDS:-10}
conns=${BENCH_CONNECTIONS:-64}
workers=${WORKERS:-2}

need() { command -v "$1" >/dev/null || { echo "write-throughput: $1 is needed ($2)" >&2; exit 2; }; }
need wrk "apt-get install wrk"
need redis-server "apt-get install redis-server"
need redis-cli "apt-get install redis-tools"
need curl "apt-get install curl"
[ -d "$root/node_modules" ] || { echo "write-throughput: run npm ci in $root first" >&2; exit 2; }

tmp=$(mktemp -d)
bare=()          # pids of the bare servers
redis_pid=""
service_pgid=""  # the launcher leads its own process group (setsid)
stop_all() {
  for p in "${bare[@]}"; do kill "$p" 2>/dev/null; done
  if [ -n "$service_pgid" ]; then
    # SIGTERM to the group: the launcher (or each app) stops gracefully; profiles are written
    kill -TERM -- "-$service_pgid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 -- "-$service_pgid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$service_pgid" 2>/dev/null
  fi
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap stop_all EXIT

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{process.stdout.write(String(s.address().port));s.close()})'; }
field() { sed -n "s/.*[ ^]$1=\([0-9.]*\).*/\1/p; s/^$1=\([0-9.]*\).*/\1/p" | head -n 1; }
wrk_post() { # url seconds -> the summary line of post.lua
  wrk -t1 -c"$conns" -d"${2}s" -s "$bench/wrk/post.lua" "$1" 2>&1 | tail -n 1
}
warm_then_measure() { wrk_post "$1" 2 >/dev/null; wrk_post "$1" "$seconds"; }
wait_http() { # url tries: until the url answers 2xx
  for _ in $(seq 1 "$2"); do curl -sf -o /dev/null "$1" && return 0; sleep 0.25; done
  return 1
}
wait_listen() { # url tries: until anything answers there (any status)
  for _ in $(seq 1 "$2"); do curl -s -o /dev/null "$1" && return 0; sleep 0.25; done
  return 1
}

# 1. the ceiling: bare node:http, bare Express 5
port=$(free_port); PORT=$port node "$bench/servers/bare-http.mjs" & bare+=($!)
wait_listen "http://127.0.0.1:$port/" 80
http_line=$(warm_then_measure "http://127.0.0.1:$port/w")
port=$(free_port); PORT=$port node "$bench/servers/bare-express.mjs" & bare+=($!)
wait_listen "http://127.0.0.1:$port/" 80
express_line=$(warm_then_measure "http://127.0.0.1:$port/w")
for p in "${bare[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; bare=()
echo "node:http    $http_line"
echo "express      $express_line"

# 2. the service, compiled, on its own redis-server (AOF everysec, as production should run)
(cd "$root" && node tools/build/build.mjs --if-stale) >/dev/null || { echo "write-throughput: build failed" >&2; exit 1; }
redis_port=$(free_port); api_port=$(free_port); gql_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec --dir "$tmp" >/dev/null 2>&1 &
redis_pid=$!
KEY="idty_$(node -e 'const c="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";let s="";for(const b of require("crypto").randomBytes(32))s+=c[b%62];process.stdout.write(s)')"
export KEY
for _ in $(seq 1 40); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
secret=${AUTH_JWT_SECRET:-$(node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("hex"))')}
if [ -z "${BENCH_PROFILE_DIR:-}" ]; then
  # as users run it: the launcher (npm start without its build step, done above)
  cmd='exec node dist/apps/launcher/main.js'
else
  # --cpu-prof is refused in NODE_OPTIONS: the devnet node, the API (its cluster processes inherit
  # the flag) and the workers are started directly, each profiled; SIGTERM to the group stops them
  # gracefully and every process writes its profile on exit
  mkdir -p "$BENCH_PROFILE_DIR"
  prof='node --cpu-prof --cpu-prof-dir="$BENCH_PROFILE_DIR"'
  cmd="DEVNET_PORT=\$(node -e 'const s=require(\"net\").createServer().listen(0,()=>{console.log(s.address().port);s.close()})'); export ARC_URL=http://127.0.0.1:\$DEVNET_PORT HEADERS_URL=http://127.0.0.1:\$DEVNET_PORT DEVNET_PORT; $prof dist/apps/devnet/main.js & sleep 1; $prof dist/apps/api/main.js & for _ in \$(seq 1 \"\$WORKERS\"); do $prof dist/apps/worker/main.js & done; wait"
fi
(
  cd "$root" && exec env NODE_ENV=production LOG_LEVEL=warn WORKERS="$workers" BLOCK_INTERVAL_MS=1000 \
    POOL_LOW_WATER="${POOL_LOW_WATER:-10000}" POOL_TARGET="${POOL_TARGET:-20000}" \
    REDIS_URL="redis://127.0.0.1:$redis_port" PORT="$api_port" GRAPHQL_PORT="$gql_port" BOOTSTRAP_API_KEY="$KEY" \
    AUTH_JWT_SECRET="$secret" BENCH_PROFILE_DIR="${BENCH_PROFILE_DIR:-}" \
    setsid bash -c "$cmd" >"$tmp/service.log" 2>&1
) &
service_pgid=$!
api="http://127.0.0.1:$api_port"
wait_http "$api/readiness" 480 || { echo "write-throughput: the service did not become ready" >&2; tail -n 20 "$tmp/service.log" >&2; exit 1; }

pending() { curl -s "$api/metrics" | awk '$1 == "proofline_records_pending_publication" || index($1, "proofline_records_pending_publication{") == 1 { print $NF; exit }'; }
redis_bytes() { redis-cli -p "$redis_port" info memory | awk -F: '$1 == "used_memory" { print $2 + 0 }'; }
drain() { # waits up to $1 seconds for an empty backlog; prints the seconds it took, or nothing
  local t0 left
  t0=$(date +%s.%N)
  for _ in $(seq 1 $(($1 * 5))); do
    left=$(pending)
    if [ "${left:-x}" = "0" ]; then awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }'; return; fi
    sleep 0.2
  done
}

writes_url="$api/api/v1/records?encode=SHA256"
wrk_post "$writes_url" 2 >/dev/null # warm-up; its records are published before the measure
drain 30 >/dev/null
sleep 2 # the warm-up's last block commits its proofs
mem_before=$(redis_bytes)
writes_line=$(wrk_post "$writes_url" "$seconds")
echo "proofline    $writes_line"
echo "backlog at the end of the load: $(pending) records"
drained=$(drain 120)
if [ -n "$drained" ]; then echo "backlog published in $drained s"; else echo "backlog not published within 120 s (left: $(pending))"; fi
sleep 3 # the last block commits its proofs
mem_after=$(redis_bytes)
accepted=$(echo "$writes_line" | field requests)
awk -v a="$mem_before" -v b="$mem_after" -v n="${accepted:-0}" 'BEGIN { if (n > 0) printf "Redis memory per accepted 1 KiB record: %.0f bytes\n", (b - a) / n }'

# 5. one client, sequential linked updates
first=$(curl -s -XPOST -H "x-api-key: $KEY" -H 'content-type: application/octet-stream' --data-binary 'version 0' "$api/api/v1/linkedrecords" | sed -n 's/.*"txId":"\([0-9a-f]*\)".*/\1/p')
updates_line=$(START=$first wrk -t1 -c1 -d"${seconds}s" -s "$bench/wrk/linked-updates.lua" "$api" 2>&1 | tail -n 1)
echo "one client, sequential linked updates: $updates_line"

express_rps=$(echo "$express_line" | field rps)
writes_rps=$(echo "$writes_line" | field rps)
p50=$(echo "$writes_line" | field p50)
p99=$(echo "$writes_line" | field p99)
# accepted and published: the records accepted during the load over the time until the last is
# published; not computable when the backlog never drained (then said so, not the accepted rate)
if [ -n "$drained" ]; then
  published=$(awk -v n="$accepted" -v s="$seconds" -v d="$drained" -v e="$express_rps" 'BEGIN { if (e > 0) printf "%.0f%% of bare Express", 100 * n / (s + d) / e; else print "n/a" }')
else
  published="n/a (the backlog was not published)"
fi
awk -v w="$writes_rps" -v e="$express_rps" -v p="$published" -v a="$p50" -v b="$p99" 'BEGIN {
  if (e > 0 && a > 0) printf "accepted writes/s = %.0f%% of bare Express; accepted and published = %s; p99/p50 = %.1f\n", 100 * w / e, p, b / a
  else print "ratios unavailable (a measurement failed)" }'
