#!/usr/bin/env bash
# Where the CPU goes under the write load, per process: the compiled service as `npm start` runs it
# (launcher, NODE_ENV=production, WORKERS workers, its own redis-server with AOF everysec), a 2 s
# warm-up, then BENCH_SECONDS of independent SHA256 writes (wrk, BENCH_CONNECTIONS connections);
# prints the wrk line, then the CPU seconds (user + system, from /proc/<pid>/stat) each process of
# the stack used during the load and, separately, while the backlog was published.
#
#   bash bench/cpu-per-process.sh            (npm run bench:cpu)
#
# Why: on a machine where wrk and every process of the stack share the cores, a sampling profiler
# charges a process for the time it waits to be scheduled (socket writes that wake Redis look
# expensive), while these figures are the CPU each process really used. Divide by the requests
# for a per-record cost. LOAD=sequential measures one client updating one linked record instead
# (bench/wrk/linked-updates.lua, one connection); LOAD=idle what the stack burns with no load. Environment: BENCH_SECONDS (10), BENCH_CONNECTIONS (64), WORKERS (2),
# POOL_LOW_WATER (10000), POOL_TARGET (20000), AUTH_JWT_SECRET (random when unset).
set -u
bench=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$bench/.." && pwd)
seconds=${BENCH_SECONDS:-10}
conns=${BENCH_CONNECTIONS:-64}
for tool in wrk redis-server curl; do command -v "$tool" >/dev/null || { echo "cpu-per-process: $tool is needed" >&2; exit 2; }; done
[ -r /proc/self/stat ] || { echo "cpu-per-process: needs /proc (Linux)" >&2; exit 2; }

tmp=$(mktemp -d)
redis_pid=""
service_pgid=""
stop_all() {
  if [ -n "$service_pgid" ]; then
    kill -TERM -- "-$service_pgid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 -- "-$service_pgid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$service_pgid" 2>/dev/null
  fi
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap stop_all EXIT

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{process.stdout.write(String(s.address().port));s.close()})'; }
(cd "$root" && node tools/build/build.mjs --if-stale) >/dev/null || { echo "cpu-per-process: build failed" >&2; exit 1; }
redis_port=$(free_port); api_port=$(free_port); gql_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec --dir "$tmp" >/dev/null 2>&1 &
redis_pid=$!
KEY="idty_$(node -e 'const c="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";let s="";for(const b of require("crypto").randomBytes(32))s+=c[b%62];process.stdout.write(s)')"
export KEY
for _ in $(seq 1 40); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
secret=${AUTH_JWT_SECRET:-$(node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("hex"))')}
(
  cd "$root" && exec env NODE_ENV=production LOG_LEVEL=warn WORKERS="${WORKERS:-2}" BLOCK_INTERVAL_MS=1000 \
    POOL_LOW_WATER="${POOL_LOW_WATER:-10000}" POOL_TARGET="${POOL_TARGET:-20000}" \
    REDIS_URL="redis://127.0.0.1:$redis_port" PORT="$api_port" GRAPHQL_PORT="$gql_port" BOOTSTRAP_API_KEY="$KEY" \
    AUTH_JWT_SECRET="$secret" setsid node dist/apps/launcher/main.js >"$tmp/service.log" 2>&1
) &
service_pgid=$!
api="http://127.0.0.1:$api_port"
for _ in $(seq 1 480); do curl -sf -o /dev/null "$api/readiness" && break; sleep 0.25; done
curl -sf -o /dev/null "$api/readiness" || { echo "cpu-per-process: the service did not become ready" >&2; tail -n 20 "$tmp/service.log" >&2; exit 1; }

pending() { curl -s "$api/metrics" | awk '$1 == "proofline_records_pending_publication" || index($1, "proofline_records_pending_publication{") == 1 { print $NF; exit }'; }
# the launcher's process tree (the devnet node and its redis-server included), recursively
tree() { local p; for p in "$@"; do echo "$p"; tree $(pgrep -P "$p"); done; }
# pid, CPU ticks (utime + stime) and command of every process of the stack (the machine's other processes are ignored)
snapshot() {
  for p in $(tree "$service_pgid") "$redis_pid"; do
    [ -r "/proc/$p/stat" ] || continue
    echo "$p $(awk '{ print $14 + $15 }' "/proc/$p/stat") $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-70)"
  done
}
report() { # label before after
  awk -v tk="$(getconf CLK_TCK)" -v label="$1" 'NR == FNR { a[$1] = $2; next } ($1 in a) { d = ($2 - a[$1]) / tk; if (d >= 0.01) { $2 = ""; printf "%s %6.2f s %s\n", label, d, $0; t += d } } END { printf "%s %6.2f s in all\n", label, t }' "$2" "$3" | sort -k2 -rn
}

url="$api/api/v1/records?encode=SHA256"
wrk -t1 -c"$conns" -d2s -s "$bench/wrk/post.lua" "$url" >/dev/null 2>&1
for _ in $(seq 1 150); do [ "$(pending)" = "0" ] && break; sleep 0.2; done
sleep 2
if [ "${LOAD:-writes}" = idle ]; then
  snapshot >"$tmp/a"
  sleep "$seconds"
  line="(no load: $seconds s idle)"
elif [ "${LOAD:-writes}" = sequential ]; then
  START=$(curl -s -XPOST -H "x-api-key: $KEY" -H 'content-type: application/octet-stream' --data-binary 'version 0' "$api/api/v1/linkedrecords" | sed -n 's/.*"txId":"\([0-9a-f]*\)".*/\1/p')
  export START
  sleep 1
  snapshot >"$tmp/a"
  line=$(wrk -t1 -c1 -d"${seconds}s" -s "$bench/wrk/linked-updates.lua" "$api" 2>&1 | tail -n 1)
else
snapshot >"$tmp/a"
line=$(wrk -t1 -c"$conns" -d"${seconds}s" -s "$bench/wrk/post.lua" "$url" 2>&1 | tail -n 1)
fi
snapshot >"$tmp/b"
echo "proofline    $line"
report load "$tmp/a" "$tmp/b"
for _ in $(seq 1 600); do [ "$(pending)" = "0" ] && break; sleep 0.2; done
snapshot >"$tmp/c"
report drain "$tmp/b" "$tmp/c"
