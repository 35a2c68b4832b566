#!/usr/bin/env bash
# How evenly the write load spreads over a Redis Cluster's masters: the compiled service as `npm
# start` runs it (launcher, NODE_ENV=production, WORKERS workers, REDIS_URL naming one node of a
# private three-master cluster, each master with AOF everysec), a 2 s warm-up, then BENCH_SECONDS
# of independent SHA256 writes (wrk, BENCH_CONNECTIONS connections, bench/wrk/post.lua), and the
# work those records cause until every one is published and proven. Prints, per master, its Redis
# commands and Redis CPU per record and its share of the cluster's; the busiest key's share of the
# commands; Redis memory per record across the cluster; and PASS/FAIL against the spread issue 22
# asks of a partitioned write path (docs/redis-cluster.md, "Scaling").
#
#   bash bench/cluster-spread.sh            (npm run bench:cluster)
#
# The measured window runs from the load's start until the backlog is published and the
# confirmation watch set holds at most 1 % of the records (at most 60 s after the drain; the last
# few may wait for the poll after ARC_CALLBACK_GRACE_MS, 30 s): publication and proving happen
# after the load, on other keys than accepting, and a window of the load alone would leave them
# out. The commands counted include the stack's idle ones over the window (BullMQ's polls,
# heartbeats) and this script's /metrics scrapes (every 0.2 s, to see the backlog and the watch
# set empty): few beside the load's. The CPU has each master's idle rate taken out (below).
#
# Figures, and where they come from:
# - commands: the delta of every master's `INFO commandstats` calls over the window (commands a
#   Lua script runs count, and so does the EVALSHA that ran them), divided by the records accepted
#   (wrk's requests less its non-2xx answers);
# - CPU: the delta of every master's `INFO cpu` (used_cpu_user + used_cpu_sys: the whole
#   redis-server, its AOF fsync thread included), less an idle floor times the window: a master
#   with no load still burns ~0.5 % of a core (cron, cluster bus), which at a few hundred records/s
#   reads as 5–10 % of the Redis CPU per record and would flatter the spread. The floor is the
#   lowest rate any master burned over 3 s before the load, the same for every master (the busiest
#   one is still finishing the warm-up's work then, so its own rate would flatter it instead; with
#   MASTERS=1 there is no floor). The raw figure is printed beside it; the pass line uses the one
#   less the floor;
# - busiest key: without MONITOR (which costs the masters more than the load it watches), from the
#   LFU access counter Redis keeps on every key. The masters run `maxmemory-policy allkeys-lfu`
#   with no maxmemory, so nothing is ever evicted (a production deployment runs noeviction; the
#   policy only changes which counter each key access updates, and BullMQ logs a warning about it
#   at start), `lfu-decay-time 0` (counters never decay) and `lfu-log-factor` 1000 until just
#   before the load, then 10 (LFU_LOG_FACTOR): the hot keys enter the load with low counters.
#   Each access increments a counter at c with probability 1/(f·(c−5)+1), from a new key's 5, so a counter at c
#   stands for about f·(c−5)(c−6)/2 + (c−5) accesses to reach c plus half the f·(c−5)+1 it waits
#   there on average; a key's accesses over the window are that figure after less before
#   (`OBJECT FREQ` of every key through `SCAN`, neither of which touches a key;
#   bench/cluster-keys.mjs). Its share is those accesses over every master's commands. Checked
#   against one key HINCRBY'd a known number of times (three keys each): 18,000–19,000 for 20,000,
#   95,000–101,000 for 100,000, 231,000–253,000 for 250,000; accesses from Lua count the same
#   (a script's HINCRBY and HGET of one key, 20,000 calls: 41,500 for 40,000). It is an estimate: the counter steps by
#   chance, a key's creation is not counted, a key deleted within the window is not seen, and a
#   counter at 255 (about 310,000 accesses) is saturated: printed so; raise LFU_LOG_FACTOR then
#   (the error grows with it: ±30 % at 30);
#   no automatic AOF rewrite runs (Redis stops updating the counters while a child process
#   runs, and the rewrite is a background cost the window should not catch by chance);
# - memory: the masters' used_memory summed, after the window (3 s after the last proof) less
#   before the load, divided by the records accepted.
#
# The devnet node keeps its chain in a redis-server of its own (the launcher starts it under
# .data/devnet-redis): it stands for ARC, and its work is not counted.
#
# Environment: BENCH_SECONDS (10), BENCH_CONNECTIONS (64), WORKERS (2), MASTERS (3),
# POOL_LOW_WATER (10000), POOL_TARGET (20000), LFU_LOG_FACTOR (10), AUTH_JWT_SECRET (random when
# unset), SERVICE_LOG (a file to keep the service's log in), KEEP_TMP (an absolute path to copy the raw
# snapshots to: INFO deltas, OBJECT FREQ before and after), MEMORY_ACCOUNTING (set: print the
# memory per record by key family, bench/memory-accounting.mjs; its snapshots are taken outside
# the figures' snapshots).
set -u
# KEEP_TMP is a path: a relative one (KEEP_TMP=1) would copy hundreds of MB of AOF into the checkout.
case "${KEEP_TMP:-}" in
"" | /*) ;;
*) echo "cluster-spread: KEEP_TMP must be an absolute path (got '$KEEP_TMP')" >&2; exit 2 ;;
esac
bench=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$bench/.." && pwd)
seconds=${BENCH_SECONDS:-10}
conns=${BENCH_CONNECTIONS:-64}
masters=${MASTERS:-3}
lfu_factor=${LFU_LOG_FACTOR:-10}
for tool in wrk redis-server redis-cli curl; do command -v "$tool" >/dev/null || { echo "cluster-spread: $tool is needed" >&2; exit 2; }; done

# free_port, start_service, stop_service
. "$bench/service.sh"
tmp=$(mktemp -d)
redis_pids=()
service_pgid=""
stop_all() {
  stop_service
  for p in "${redis_pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -n "${SERVICE_LOG:-}" ] && cp "$tmp/service.log" "$SERVICE_LOG"
  rm -rf "$tmp"
}
trap stop_all EXIT

(cd "$root" && node tools/build/build.mjs --if-stale) >/dev/null || { echo "cluster-spread: build failed" >&2; exit 1; }

# the cluster: MASTERS redis-servers, no replicas, the slots split evenly by redis-cli
ports=()
for i in $(seq 1 "$masters"); do
  port=$(free_port)
  mkdir -p "$tmp/redis-$port"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$tmp/redis-$port" --save '' \
    --appendonly yes --appendfsync everysec --cluster-enabled yes --cluster-config-file nodes.conf \
    --cluster-announce-ip 127.0.0.1 --auto-aof-rewrite-percentage 0 --maxmemory-policy allkeys-lfu --lfu-decay-time 0 \
    --lfu-log-factor 1000 >"$tmp/redis-$port.log" 2>&1 &
  redis_pids+=($!)
  ports+=("$port")
done
for port in "${ports[@]}"; do
  for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
done
nodes=(); for port in "${ports[@]}"; do nodes+=("127.0.0.1:$port"); done
if [ "$masters" -gt 1 ]; then
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$tmp/create.log" 2>&1 ||
    { echo "cluster-spread: redis-cli --cluster create failed" >&2; cat "$tmp/create.log" >&2; exit 1; }
else
  redis-cli -p "${ports[0]}" cluster addslotsrange 0 16383 >/dev/null
fi
for port in "${ports[@]}"; do
  for _ in $(seq 1 100); do redis-cli -p "$port" cluster info | grep -q 'cluster_state:ok' && break; sleep 0.1; done
  redis-cli -p "$port" cluster info | grep -q 'cluster_state:ok' || { echo "cluster-spread: node $port is not ok" >&2; exit 1; }
done

start_service cluster-spread "redis://${nodes[0]}"

metric() { curl -s "$api/metrics" | awk -v m="$1" '$1 == m || index($1, m "{") == 1 { print $NF; exit }'; }
pending() { metric proofline_records_pending_publication; }
# transactions published and not yet proven (the confirmation watch set; /metrics reads it, so
# waiting on it adds no command of this script's own to the masters but the scrape's few)
unproven() { metric proofline_arc_unproven_transactions; }
# one line per master: node cmds cpu_s used_memory
stats() {
  local port
  for port in "${ports[@]}"; do
    echo "127.0.0.1:$port $(redis-cli -p "$port" info commandstats | tr -d '\r' | awk -F'[:=,]' '/^cmdstat_/ { n += $3 } END { print n + 0 }') $(redis-cli -p "$port" info cpu | tr -d '\r' | awk -F: '$1 == "used_cpu_user" || $1 == "used_cpu_sys" { s += $2 } END { printf "%.3f", s }') $(redis-cli -p "$port" info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 + 0 }')"
  done
}
commandstats() { # port: "command calls" per line
  redis-cli -p "$1" info commandstats | tr -d '\r' | awk -F'[:=,]' '/^cmdstat_/ { sub(/^cmdstat_/, "", $1); print $1, $3 }'
}

echo "cluster-spread: $masters masters (${nodes[*]}), WORKERS=${WORKERS:-2}, $seconds s of independent SHA256 writes at $conns connections"
url="$api/api/v1/records?encode=SHA256"
wrk -t1 -c"$conns" -d2s -s "$bench/wrk/post.lua" "$url" >/dev/null 2>&1
for _ in $(seq 1 150); do [ "$(pending)" = "0" ] && break; sleep 0.2; done
for _ in $(seq 1 150); do [ "$(unproven)" != "0" ] || break; sleep 0.2; done
# the masters' idle CPU rate (cron, cluster bus, AOF fsync, BullMQ's polls), subtracted below
stats >"$tmp/stats-idle0"; i0=$(date +%s.%N)
sleep 3
stats >"$tmp/stats-idle1"; i1=$(date +%s.%N)

# the counters climbed slowly (factor 1000) through the start and the warm-up, so the hot keys start
# the load low and their counters do not saturate within it; from here each access counts at
# LFU_LOG_FACTOR
for port in "${ports[@]}"; do redis-cli -p "$port" config set lfu-log-factor "$lfu_factor" >/dev/null; done
[ -n "${MEMORY_ACCOUNTING:-}" ] && node "$bench/memory-accounting.mjs" snapshot "${nodes[@]}" >"$tmp/memory-a.json"
node "$bench/cluster-keys.mjs" "${nodes[@]}" >"$tmp/keys-a" || { echo "cluster-spread: reading OBJECT FREQ failed" >&2; exit 1; }
for port in "${ports[@]}"; do commandstats "$port" >"$tmp/cmds-a-$port"; done
stats >"$tmp/stats-a"
log_lines=$(wc -l <"$tmp/service.log")
t0=$(date +%s.%N)
line=$(wrk -t1 -c"$conns" -d"${seconds}s" -s "$bench/wrk/post.lua" "$url" 2>&1 | tail -n 1)
echo "proofline    $line"
requests=$(echo "$line" | sed -n 's/.*requests=\([0-9]*\).*/\1/p')
non2xx=$(echo "$line" | sed -n 's/.*non2xx=\([0-9]*\).*/\1/p')
n=$(( ${requests:-0} - ${non2xx:-0} ))
[ "$n" -gt 0 ] || { echo "cluster-spread: no record accepted (wrk: $line)" >&2; tail -n 20 "$tmp/service.log" >&2; exit 1; }
echo "backlog at the end of the load: $(pending) records"
for _ in $(seq 1 600); do [ "$(pending)" = "0" ] && break; sleep 0.2; done
# until proven, bar the last 1 %: a few records proven only by the poll after ARC_CALLBACK_GRACE_MS
# (30 s) would stretch the window with idle time and no work worth counting
for _ in $(seq 1 300); do u=$(unproven); [ -n "$u" ] && [ "$u" -gt $((n / 100)) ] || break; sleep 0.2; done
left=$(unproven)
t1=$(date +%s.%N)
stats >"$tmp/stats-b"
for port in "${ports[@]}"; do commandstats "$port" >"$tmp/cmds-b-$port"; done
node "$bench/cluster-keys.mjs" "${nodes[@]}" >"$tmp/keys-b" || { echo "cluster-spread: reading OBJECT FREQ failed" >&2; exit 1; }
[ -n "${KEEP_TMP:-}" ] && cp -r "$tmp" "$KEEP_TMP"
sleep 3 # the last block's proofs are committed before memory is read
stats >"$tmp/stats-c"
[ -n "${MEMORY_ACCOUNTING:-}" ] && node "$bench/memory-accounting.mjs" snapshot "${nodes[@]}" >"$tmp/memory-c.json"
window=$(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
proven="$left unproven left"; [ -n "$left" ] || proven="the watch set is not on this version's /metrics: not waited for"
echo "window: the load's start until published and proven, $window s ($proven); $n records accepted; $masters masters"

# slots each master serves
redis-cli -p "${ports[0]}" cluster nodes | tr -d '\r' >"$tmp/cluster-nodes"
slots_of() { awk -v id="$(redis-cli -p "$1" cluster myid | tr -d '\r')" '$1 == id { s = ""; for (i = 9; i <= NF; i++) s = s (s ? "," : "") $i; print s }' "$tmp/cluster-nodes"; }

# accesses per key over the window, estimated from the LFU counters (header): "node est key", descending
awk -F'\t' -v f="$lfu_factor" '
  function hits(c) { c -= 5; return c <= 0 ? 0 : f * c * (c - 1) / 2 + c + (f * c + 1) / 2 }
  NR == FNR { a[$1 "\t" $3] = $2; next }
  {
    k = $1 "\t" $3; before = (k in a) ? a[k] : 5
    d = hits($2) - hits(before)
    if (d > 0) printf "%s\t%.0f\t%s\t%s\n", $1, d, $3, ($2 == 255 ? "saturated" : "")
  }' "$tmp/keys-a" "$tmp/keys-b" | sort -t$'\t' -k2,2 -rn >"$tmp/hot"

# per master: node, commands, CPU seconds (raw), CPU seconds less the idle floor over the window
# (never below 0), memory bytes (3 s after the window less before the load)
paste -d' ' "$tmp/stats-idle0" "$tmp/stats-idle1" "$tmp/stats-a" "$tmp/stats-b" "$tmp/stats-c" |
  awk -v idle="$(awk -v a="$i1" -v b="$i0" 'BEGIN { print a - b }')" -v w="$window" '
    { node[NR] = $1; c[NR] = $14 - $10; raw[NR] = $15 - $11; mem[NR] = $20 - $12; r = ($7 - $3) / idle; if (NR == 1 || r < floor) floor = r }
    END {
      if (NR == 1) floor = 0 # no idle master to take a floor from
      for (i = 1; i <= NR; i++) { load = raw[i] - floor * w; print node[i], c[i], raw[i], (load < 0 ? 0 : load), mem[i] }
    }' >"$tmp/per-master"
tc=$(awk '{ t += $2 } END { print t }' "$tmp/per-master")
for port in "${ports[@]}"; do
  node="127.0.0.1:$port"
  top=$(awk -F'\t' -v n="$node" '$1 == n { printf "%s: ~%.1f %% of all commands%s", $3, 100 * $2 / tc, ($4 ? " (counter saturated)" : ""); exit }' tc="$tc" "$tmp/hot")
  awk -v node="$node" -v n="$n" -v slots="$(slots_of "$port")" -v top="${top:-none}" '
    { c[$1] = $2; r[$1] = $3; l[$1] = $4; tc += $2; tr += $3; tl += $4 }
    END {
      printf "master %s (slots %s): %.1f commands per record (%.1f %%) | Redis CPU %.3f ms per record (%.1f %%; with its idle CPU %.3f ms, %.1f %%) | its busiest key %s\n",
        node, slots, c[node] / n, 100 * c[node] / tc, 1000 * l[node] / n, 100 * l[node] / tl, 1000 * r[node] / n, 100 * r[node] / tr, top
    }' "$tmp/per-master"
done
awk -v n="$n" '{ tc += $2; tr += $3; tl += $4; tm += $5 } END {
  printf "cluster: %.1f commands and %.3f ms of Redis CPU per record (%.3f ms with the idle CPU); Redis memory %+.0f bytes per record (used_memory of every master)\n", tc / n, 1000 * tl / n, 1000 * tr / n, tm / n }' "$tmp/per-master"

# per master, the commands that carried most of its work (calls per record, at least 0.5)
for port in "${ports[@]}"; do
  top=$(awk -v n="$n" 'NR == FNR { a[$1] = $2; next } { d = ($2 - a[$1]) / n; if (d >= 0.5) printf "%.1f %s\n", d, $1 }' \
    "$tmp/cmds-a-$port" "$tmp/cmds-b-$port" | sort -rn | awk '{ printf " %s %s", $2, $1 }')
  echo "  127.0.0.1:$port:${top:- (none)}"
done
# a hash tag's keys share one slot, so one master: its share is the most a master could shed of it
echo "  the busiest hash tags (their keys' estimated accesses, % of all commands; a tag is never split over masters):"
awk -F'\t' '
  { k = $3; o = index(k, "{"); tag = "(no tag)"; if (o) { rest = substr(k, o + 1); c = index(rest, "}"); if (c > 1) tag = "{" substr(rest, 1, c - 1) "}" } a[tag "\t" $1] += $2 }
  END { for (t in a) { split(t, p, "\t"); printf "%.0f\t%s\t%s\n", a[t], p[1], p[2] } }' "$tmp/hot" | sort -rn |
  awk -v tc="$tc" -F'\t' 'NR <= 5 { printf "    %5.1f %%  %s  %s\n", 100 * $1 / tc, $3, $2 }'
echo "  the busiest keys (estimated accesses over the window, % of all commands):"
awk -v tc="$tc" -F'\t' 'NR <= 5 { printf "    %5.1f %%  %s  %s%s\n", 100 * $2 / tc, $1, $3, ($4 ? " (counter saturated)" : "") }' "$tmp/hot"

# MEMORY_ACCOUNTING=1: the memory per record by key family (bench/memory-accounting.mjs)
[ -n "${MEMORY_ACCOUNTING:-}" ] && node "$bench/memory-accounting.mjs" table "$n" "$tmp/memory-a.json" "$tmp/memory-c.json"

# a run whose service logged warnings or errors (LOG_LEVEL=warn) from the load's start says so:
# its figures may carry retries or restarts (SERVICE_LOG=<file> keeps the log). BullMQ's warning
# about the LFU policy (header) is expected and not counted.
warned=$(tail -n +"$((log_lines + 1))" "$tmp/service.log" | grep -vc 'Eviction policy is allkeys-lfu')
[ "$warned" -eq 0 ] || echo "  the service logged $warned lines at warn or above during the window${SERVICE_LOG:+ (kept in $SERVICE_LOG)}"

# the pass line of issue 22: with M masters the busiest carries at most 1/M + 0.1 of the commands
# and of the CPU (less idle), no key more than 5 % of the commands, at most 1.5 KB (1500 bytes)
# of Redis memory per record
awk -v n="$n" -v m="$masters" -v hot="$(head -n 1 "$tmp/hot" | cut -f2)" '
  { if ($2 > mc) mc = $2; if ($4 > ml) ml = $4; tc += $2; tl += $4; tm += $5 }
  END {
    bound = 1 / m + 0.1
    printf "%s  busiest master carries %.1f %% of the commands (at most %.1f %%)\n", (mc / tc <= bound ? "PASS" : "FAIL"), 100 * mc / tc, 100 * bound
    printf "%s  busiest master carries %.1f %% of the Redis CPU (at most %.1f %%)\n", (ml / tl <= bound ? "PASS" : "FAIL"), 100 * ml / tl, 100 * bound
    printf "%s  busiest key takes ~%.1f %% of the commands (at most 5 %%)\n", (hot / tc <= 0.05 ? "PASS" : "FAIL"), 100 * hot / tc
    printf "%s  Redis memory %.0f bytes per record (at most 1500)\n", (tm / n <= 1500 ? "PASS" : "FAIL"), tm / n
  }' "$tmp/per-master"
