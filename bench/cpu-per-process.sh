#!/usr/bin/env bash
# Where the CPU goes under the write load, per process: the compiled service as `npm start` runs it
# (launcher, NODE_ENV=production, WORKERS workers, its own redis-server with AOF everysec), a 2 s
# warm-up, then BENCH_SECONDS of independent SHA256 writes (wrk, BENCH_CONNECTIONS connections);
# prints the wrk line, then the CPU seconds (user + system, from /proc/<pid>/stat) each process of
# the stack used during the load and, separately, while the backlog was published.
#
#   bash bench/cpu-per-process.sh            (npm run bench:cpu)
#
# It sources bench/service.sh from its own folder (how the service is started, shared with
# bench/cluster-spread.sh). To measure an older checkout with this version, copy both files into
# that checkout's bench/ folder: cp bench/cpu-per-process.sh bench/service.sh <checkout>/bench/
#
# Why: on a machine where wrk and every process of the stack share the cores, a sampling profiler
# charges a process for the time it waits to be scheduled (socket writes that wake Redis look
# expensive), while these figures are the CPU each process really used. Divide by the requests
# for a per-record cost. With PROFILE_APPS (see docs/performance.md) it also prints the measured
# window on the profiles' clock ("profile window: <start> <end> s"), to cut them to the load.
# Under the write load it ends with the CPU per record until proven: every process's CPU from the
# load's start until the confirmation watch set is empty (at most 60 s after the drain), which
# counts the proving a version leaves until after the ten seconds; it includes the stack's idle
# CPU over the seconds it waited (LOAD=idle measures that rate), printed beside it.
# LOAD=sequential measures one client updating one linked record instead
# (bench/wrk/linked-updates.lua, one connection); LOAD=idle what the stack burns with no load. COMMANDS=1 also prints, per accepted record, the Redis commands each redis-server (the service's, the devnet node's) ran during the load (with LOAD=idle, per second). Environment: BENCH_SECONDS (10), BENCH_CONNECTIONS (64), WORKERS (2),
# POOL_LOW_WATER (10000), POOL_TARGET (20000), AUTH_JWT_SECRET (random when unset).
#
# Under the write load it first measures bare Express 5 (bench/servers/bare-express.mjs) the same
# way (its CPU and wrk's per request), then prints the CPU per record by role (API, devnet node
# with its redis-server, workers, the service's Redis, wrk) and the CPU bound: how many records/s
# the machine's cores could carry at that cost, and at the cost of the devnet node plus one bare
# Express request alone (everything else free), each as a share of bare Express.
set -u
bench=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$bench/.." && pwd)
seconds=${BENCH_SECONDS:-10}
conns=${BENCH_CONNECTIONS:-64}
for tool in wrk redis-server curl; do command -v "$tool" >/dev/null || { echo "cpu-per-process: $tool is needed" >&2; exit 2; }; done
[ -r /proc/self/stat ] || { echo "cpu-per-process: needs /proc (Linux)" >&2; exit 2; }

# free_port, start_service, stop_service
. "$bench/service.sh"
tmp=$(mktemp -d)
redis_pid=""
service_pgid=""
stop_all() {
  stop_service
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap stop_all EXIT

# wrk's own CPU (user + system, seconds), printed after its line: the subshell's children times (a
# builtin with a redirection runs in the subshell itself; in a pipe it would see no children)
timed_wrk() { ( wrk "$@" 2>&1 | tail -n 1; times >"$tmp/times"; awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "wrkcpu=%.2f\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$tmp/times" ); }
(cd "$root" && node tools/build/build.mjs --if-stale) >/dev/null || { echo "cpu-per-process: build failed" >&2; exit 1; }
express_rps=0; express_cpu=0; express_wrk=0; express_n=0
if [ "${LOAD:-writes}" = writes ]; then
  # bare Express 5 under the same load: its CPU and wrk's per request (the baseline of the bound below)
  ep=$(free_port); PORT=$ep node "$bench/servers/bare-express.mjs" & epid=$!
  sleep 1
  wrk -t1 -c"$conns" -d2s -s "$bench/wrk/post.lua" "http://127.0.0.1:$ep/w" >/dev/null 2>&1
  e0=$(awk '{ print $14 + $15 }' "/proc/$epid/stat")
  out=$(timed_wrk -t1 -c"$conns" -d"${seconds}s" -s "$bench/wrk/post.lua" "http://127.0.0.1:$ep/w")
  e1=$(awk '{ print $14 + $15 }' "/proc/$epid/stat")
  kill "$epid"; wait "$epid" 2>/dev/null
  echo "express      $(echo "$out" | head -n 1)"
  express_rps=$(echo "$out" | head -n 1 | sed -n 's/.*rps=\([0-9.]*\).*/\1/p')
  express_n=$(echo "$out" | head -n 1 | sed -n 's/.*requests=\([0-9]*\).*/\1/p')
  express_wrk=$(echo "$out" | sed -n 's/^wrkcpu=//p')
  express_cpu=$(awk -v a="$e0" -v b="$e1" -v tk="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / tk }')
  # CPU of one libsecp256k1 signature and of its check (the API signs every record, the devnet node checks it)
  read -r sign_ms verify_ms < <(cd "$root" && node -e '
    const s = require("secp256k1"), c = require("node:crypto");
    const k = c.randomBytes(32), p = s.publicKeyCreate(k), m = c.randomBytes(32), n = 4000;
    for (let i = 0; i < 500; i++) s.ecdsaVerify(s.ecdsaSign(m, k).signature, m, p);
    const ms = (u) => ((u.user + u.system) / n / 1000).toFixed(3);
    let t = process.cpuUsage(); for (let i = 0; i < n; i++) s.ecdsaSign(m, k); const a = ms(process.cpuUsage(t));
    const g = s.ecdsaSign(m, k).signature;
    t = process.cpuUsage(); for (let i = 0; i < n; i++) s.ecdsaVerify(g, m, p); console.log(a, ms(process.cpuUsage(t)));')
fi
# every port free (the devnet node too: its default 9090 collides with any other stack on the machine)
redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec --dir "$tmp" >/dev/null 2>&1 &
redis_pid=$!
for _ in $(seq 1 40); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
start_service cpu-per-process "redis://127.0.0.1:$redis_port"

pending() { curl -s "$api/metrics" | awk '$1 == "proofline_records_pending_publication" || index($1, "proofline_records_pending_publication{") == 1 { print $NF; exit }'; }
# the launcher's process tree (the devnet node and its redis-server included), recursively
tree() { local p; for p in "$@"; do echo "$p"; tree $(pgrep -P "$p"); done; }
# pid, CPU ticks (utime + stime) and command of every process of the stack (the machine's other processes are ignored)
snapshot() {
  for p in $(tree "$service_pgid") "$redis_pid"; do
    [ -r "/proc/$p/stat" ] || continue
    echo "$p $(awk '{ print $14 + $15 }' "/proc/$p/stat") $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-300)"
  done
}
report() { # label before after
  awk -v tk="$(getconf CLK_TCK)" -v label="$1" 'NR == FNR { a[$1] = $2; next } ($1 in a) { d = ($2 - a[$1]) / tk; if (d >= 0.01) { $2 = ""; printf "%s %6.2f s %s\n", label, d, $0; t += d } } END { printf "%s %6.2f s in all\n", label, t }' "$2" "$3" | sort -k2 -rn
}

# awk, the start of a program over two snapshots (files a, then b): c[role] and t, the CPU seconds
# each role and all used. The devnet node and the redis-server it started (the one that is not
# the service's) are one role.
by_role='
    NR == FNR { a[$1] = $2; next }
    ($1 in a) {
      d = ($2 - a[$1]) / tk; cmd = $0
      role = cmd ~ /apps\/api\// ? "api" : cmd ~ /apps\/devnet\// ? "devnet" : cmd ~ /apps\/worker\// ? "workers" : cmd ~ ("redis-server 127.0.0.1:" rp) ? "redis" : cmd ~ /redis-server/ ? "devnet" : "other"
      c[role] += d; t += d
    }'

# COMMANDS=1: zero both redis-servers' command statistics just before the measured load
reset_commandstats() {
  [ -n "${COMMANDS:-}" ] || return 0
  # the devnet node's redis-server: the one in the stack's tree that is not the service's
  devnet_redis_port=$(awk '/redis-server 127.0.0.1:/ { split($4, a, ":"); if (a[2] != rp) print a[2] }' rp="$redis_port" "$tmp/a" | head -n 1)
  for rport in "$redis_port" $devnet_redis_port; do redis-cli -p "$rport" config resetstat >/dev/null; done
}

url="$api/api/v1/records?encode=SHA256"
wrk -t1 -c"$conns" -d2s -s "$bench/wrk/post.lua" "$url" >/dev/null 2>&1
for _ in $(seq 1 150); do [ "$(pending)" = "0" ] && break; sleep 0.2; done
sleep 2
if [ "${LOAD:-writes}" = idle ]; then
  snapshot >"$tmp/a"; load_start=$(cut -d' ' -f1 /proc/uptime)
  reset_commandstats
  sleep "$seconds"
  line="(no load: $seconds s idle)"
elif [ "${LOAD:-writes}" = sequential ]; then
  START=$(curl -s -XPOST -H "x-api-key: $KEY" -H 'content-type: application/octet-stream' --data-binary 'version 0' "$api/api/v1/linkedrecords" | sed -n 's/.*"txId":"\([0-9a-f]*\)".*/\1/p')
  export START
  sleep 1
  snapshot >"$tmp/a"; load_start=$(cut -d' ' -f1 /proc/uptime)
  reset_commandstats
  line=$(wrk -t1 -c1 -d"${seconds}s" -s "$bench/wrk/linked-updates.lua" "$api" 2>&1 | tail -n 1)
else
snapshot >"$tmp/a"; load_start=$(cut -d' ' -f1 /proc/uptime)
reset_commandstats
out=$(timed_wrk -t1 -c"$conns" -d"${seconds}s" -s "$bench/wrk/post.lua" "$url")
line=$(echo "$out" | head -n 1); wrk_cpu=$(echo "$out" | sed -n 's/^wrkcpu=//p')
fi
snapshot >"$tmp/b"
load_end=$(cut -d' ' -f1 /proc/uptime)
echo "proofline    $line"
# PROFILE_APPS (the launcher writes a .cpuprofile per named process): the measured window on the
# clock the profiles' timestamps use (CLOCK_MONOTONIC, which /proc/uptime follows), to cut them to it
[ -n "${PROFILE_APPS:-}" ] && echo "profile window: $load_start $load_end s (monotonic)"
report load "$tmp/a" "$tmp/b"
if [ "${LOAD:-writes}" = writes ]; then
  n=$(echo "$line" | sed -n 's/.*requests=\([0-9]*\).*/\1/p')
  awk -v tk="$(getconf CLK_TCK)" -v n="${n:-0}" -v rp="$redis_port" -v wrk="${wrk_cpu:-0}" -v cores="$(nproc)" \
      -v e="$express_rps" -v es="$express_cpu" -v ew="$express_wrk" -v en="$express_n" -v sg="$sign_ms" -v vf="$verify_ms" "$by_role"'
    END {
      if (n <= 0 || en <= 0) exit
      printf "CPU per record (ms): api %.3f | devnet node + its redis %.3f | workers %.3f | service redis %.3f | other %.3f | wrk %.3f | all %.3f\n", 1000*c["api"]/n, 1000*c["devnet"]/n, 1000*c["workers"]/n, 1000*c["redis"]/n, 1000*c["other"]/n, 1000*wrk/n, 1000*(t+wrk)/n
      xs = 1000*es/en; xw = 1000*ew/en
      printf "bare Express: %.0f/s, CPU per request %.3f ms (server) + %.3f ms (wrk)\n", e, xs, xw
      all = 1000*(t+wrk)/n; dv = 1000*c["devnet"]/n
      printf "CPU bound on %d cores: at this cost %.0f records/s (%.0f%% of bare Express); the devnet node and one bare Express request alone, everything else free: %.0f/s (%.0f%%)\n", cores, cores*1000/all, 100*cores*1000/all/e, cores*1000/(dv+xs), 100*cores*1000/(dv+xs)/e
      floor = xs + xw + sg + vf; budget = cores*1000/(0.6*e)
      printf "60%% of bare Express on %d cores allows %.3f ms of CPU per record; a bare Express request with its wrk share (%.3f) plus one libsecp256k1 signature (%.3f) and its check (%.3f) take %.3f, leaving %.3f ms for everything else (here: %.3f)\n", cores, budget, xs + xw, sg, vf, floor, budget - floor, all - floor
    }' "$tmp/a" "$tmp/b"
fi
if [ -n "${COMMANDS:-}" ]; then
  # Redis commands per accepted record during the load, by command (calls, and the server's µs per
  # record); with LOAD=idle per second instead: what the stack's timers cost with no load (the part
  # of a loaded run's figure per record that depends on its throughput: this rate / records per s)
  per=record; n=$(echo "$line" | sed -n 's/.*requests=\([0-9]*\).*/\1/p')
  [ "${LOAD:-writes}" = idle ] && { per=second; n=$seconds; }
  for rport in "$redis_port" $devnet_redis_port; do
    label=service; [ "$rport" = "$redis_port" ] || label=devnet
    redis-cli -p "$rport" info commandstats | tr -d '\r' | awk -F'[:=,]' -v n="${n:-1}" -v label="$label" -v per="$per" '
      /^cmdstat_/ { sub(/^cmdstat_/, "", $1); calls[$1] = $3; usec[$1] = $5; tc += $3; tu += $5 }
      END {
        printf "%s redis: %.2f commands and %.1f µs of command time per %s\n", label, tc / n, tu / n, per
        for (c in calls) if (calls[c] / n >= 0.01) printf "  %-22s %7.3f calls  %6.1f µs per %s\n", c, calls[c] / n, usec[c] / n, per
      }' | sort -k2 -rn
  done
fi
for _ in $(seq 1 600); do [ "$(pending)" = "0" ] && break; sleep 0.2; done
snapshot >"$tmp/c"
report drain "$tmp/b" "$tmp/c"
if [ "${LOAD:-writes}" = writes ]; then
  # Until proven: the load's records keep costing CPU after it (publication of the backlog, and
  # proving them: callbacks, proofs verified and stored), and a version that defers more of that
  # past the ten seconds looks cheaper per record than it is. So also: every process's CPU from
  # the load's start until the confirmation watch set is empty (at most 60 s more), per record.
  # the watch set, read from Redis (its key's name differs between versions; the metric is not
  # served by every version's /metrics)
  watch_key=$(redis-cli -p "$redis_port" --scan --pattern '*arc*unproven*' | head -n 1)
  unproven() { if [ -n "$watch_key" ]; then redis-cli -p "$redis_port" zcard "$watch_key"; else echo 0; fi; }
  waited=0
  for _ in $(seq 1 300); do [ "$(unproven)" = "0" ] && break; sleep 0.2; waited=$((waited + 1)); done
  snapshot >"$tmp/d"
  awk -v tk="$(getconf CLK_TCK)" -v n="${n:-0}" -v rp="$redis_port" -v left="$(unproven)" -v s="$(awk -v w="$waited" 'BEGIN { printf "%.1f", w * 0.2 }')" "$by_role"'
    END {
      if (n <= 0) exit
      printf "CPU per record until proven (ms; the stack without wrk, from the load'"'"'s start, %s s after the drain, %s unproven left): api %.3f | devnet node + its redis %.3f | workers %.3f | service redis %.3f | all %.3f\n", s, left, 1000*c["api"]/n, 1000*c["devnet"]/n, 1000*c["workers"]/n, 1000*c["redis"]/n, 1000*t/n
    }' "$tmp/a" "$tmp/d"
fi
