#!/usr/bin/env bash
# The ceiling the fixed architecture leaves a record write, in one run, beside bare Express 5:
#
#   bash bench/architecture-floor.sh
#
# 1. bare Express 5 answering the 1 KiB POST (bench/servers/bare-express.mjs), as the reference
#    script measures it;
# 2. Express 5 plus the two Redis round trips a durable, funded write cannot do without (reserve a
#    funding UTXO, then store record + outbox entry + the pool's commit in one script;
#    bench/servers/express-redis-floor.mjs), on its own redis-server with AOF everysec, in one
#    process and in two (node:cluster, as API_PROCESSES=2 runs the API).
# Same load as the reference script: wrk, 1 thread, BENCH_CONNECTIONS (64), 2 s warm-up, then
# BENCH_SECONDS (10). What it shows: how much of bare Express is left before Proofline does any of
# its own work (authentication, encoding, the transaction and its signature, the queue, the
# publication, the devnet's validation, the proof).
set -u
bench=$(cd "$(dirname "$0")" && pwd)
S=${BENCH_SECONDS:-10}
C=${BENCH_CONNECTIONS:-64}
post=$bench/wrk/post.lua
for tool in wrk redis-server; do command -v "$tool" >/dev/null || { echo "architecture-floor: $tool is needed" >&2; exit 2; }; done
port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
load() { wrk -t1 -c"$C" -d2s -s "$post" "$1" >/dev/null 2>&1; wrk -t1 -c"$C" -d"${S}s" -s "$post" "$1" 2>&1 | tail -n 1; }
num() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

ep=$(port); PORT=$ep node "$bench/servers/bare-express.mjs" & pids+=($!)
sleep 1
express=$(load "http://127.0.0.1:$ep/w")
kill "${pids[@]}"; wait 2>/dev/null; pids=()
echo "express                      $express"

rp=$(port)
redis-server --port "$rp" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec --dir "$work" >/dev/null 2>&1 & rpid=$!
sleep 0.5
e=$(echo "$express" | num rps)
for n in 1 2; do
  fp=$(port); PORT=$fp REDIS_URL="redis://127.0.0.1:$rp" FLOOR_PROCESSES=$n node "$bench/servers/express-redis-floor.mjs" & pids+=($!)
  sleep 1.5
  floor=$(load "http://127.0.0.1:$fp/w")
  kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null; pids=()
  echo "express + 2 redis trips (x$n) $floor"
  awk -v w="$(echo "$floor" | num rps)" -v e="$e" -v n="$n" 'BEGIN { printf "  = %.0f%% of bare Express (%d process%s)\n", 100*w/e, n, (n > 1 ? "es" : "") }'
done
kill "$rpid" 2>/dev/null
