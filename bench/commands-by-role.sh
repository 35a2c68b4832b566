#!/usr/bin/env bash
# Which process sends which Redis commands, per accepted record, under the write load: the compiled
# service as `npm start` runs it (bench/service.sh) on its own redis-server, BENCH_SECONDS (14) of
# independent SHA256 writes from wrk (BENCH_CONNECTIONS, 64), and `redis-cli monitor` for
# MONITOR_SECONDS (4) in the middle. Prints the top-level commands (not those a script runs) per
# accepted record by role (api, worker, graphql, devnet) and by command and normalized first key
# (bench/commands-by-role.mjs): a script call shows as `evalsha <sha> <its first key>`.
#
#   bash bench/commands-by-role.sh                     (REDIS_PARTITIONS=64 BENCH_CONNECTIONS=8 …)
#
# Why: INFO commandstats (COMMANDS=1 npm run bench:cpu) counts the commands scripts run too and
# cannot say which process sent what. MONITOR slows the server to a few hundred records/s, so
# read the counts per record, not the rate; the wrk line is printed for the non-2xx count.
# Accepted records are counted from the capture (the accept scripts' SET of a record's raw
# transaction). KEEP=<absolute dir> keeps the capture.
set -u
bench=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$bench/.." && pwd)
seconds=${BENCH_SECONDS:-14}
window=${MONITOR_SECONDS:-4}
for tool in wrk redis-server redis-cli curl ss; do command -v "$tool" >/dev/null || { echo "commands-by-role: $tool is needed" >&2; exit 2; }; done
. "$bench/service.sh"
tmp=$(mktemp -d)
service_pgid=""
redis_pid=""
trap 'stop_service; [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
(cd "$root" && node tools/build/build.mjs --if-stale) >/dev/null || { echo "commands-by-role: build failed" >&2; exit 1; }
port=$(free_port)
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" >/dev/null 2>&1 &
redis_pid=$!
for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
start_service commands-by-role "redis://127.0.0.1:$port"
url="$api/api/v1/records?encode=SHA256"
wrk -t1 -c"${BENCH_CONNECTIONS:-64}" -d"${seconds}s" -s "$bench/wrk/post.lua" "$url" >"$tmp/wrk.txt" 2>&1 &
wrk_pid=$!
sleep $(( (seconds - window) / 2 ))
timeout "$window" redis-cli -p "$port" monitor >"$tmp/monitor.txt" &
monitor_pid=$!
# Each client connection's process, while they are open: local address -> pid -> app.
ss -tnp 2>/dev/null | awk -v p="127.0.0.1:$port" '$5 == p' >"$tmp/ss.txt"
for pid in $(grep -o 'pid=[0-9]*' "$tmp/ss.txt" | cut -d= -f2 | sort -u); do
  echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline")"
done >"$tmp/procs.txt"
wait "$monitor_pid"
wait "$wrk_pid"
echo "proofline    $(tail -n 1 "$tmp/wrk.txt")"
node "$bench/commands-by-role.mjs" "$tmp/monitor.txt" "$tmp/ss.txt" "$tmp/procs.txt"
if [ -n "${KEEP:-}" ]; then
  case "$KEEP" in /*) mkdir -p "$KEEP" && cp "$tmp"/*.txt "$KEEP"/ ;; *) echo "commands-by-role: KEEP must be an absolute path" >&2 ;; esac
fi
