# Sourced by the benchmark scripts (bench/cpu-per-process.sh, bench/cluster-spread.sh), never run:
# starts the compiled service as `npm start` runs it and waits until it is ready.
#
# A script that sources it finds it beside itself ("$bench/service.sh"), so measuring an older
# checkout means copying both files into its bench/ folder.
#
# The caller defines `root` (the checkout), `tmp` (a directory it removes on exit) and `service_pgid`
# (empty until start_service), and calls stop_service from its exit trap.

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{process.stdout.write(String(s.address().port));s.close()})'; }

# start_service NAME REDIS_URL: the launcher (NODE_ENV=production, WORKERS workers, the devnet node)
# on free ports, in a process group of its own (service_pgid), its log in $tmp/service.log; exports
# KEY (a bootstrap API key) and sets api (the API's base URL). Exits the script with a message
# naming NAME when the API is not ready within two minutes.
start_service() {
  local name=$1 redis_url=$2 api_port gql_port devnet_port secret
  api_port=$(free_port); gql_port=$(free_port); devnet_port=$(free_port)
  KEY="idty_$(node -e 'const c="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";let s="";for(const b of require("crypto").randomBytes(32))s+=c[b%62];process.stdout.write(s)')"
  export KEY
  secret=${AUTH_JWT_SECRET:-$(node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("hex"))')}
  (
    cd "$root" && exec env NODE_ENV=production LOG_LEVEL=warn WORKERS="${WORKERS:-2}" BLOCK_INTERVAL_MS=1000 \
      POOL_LOW_WATER="${POOL_LOW_WATER:-10000}" POOL_TARGET="${POOL_TARGET:-20000}" \
      REDIS_URL="$redis_url" PORT="$api_port" GRAPHQL_PORT="$gql_port" DEVNET_PORT="$devnet_port" BOOTSTRAP_API_KEY="$KEY" \
      AUTH_JWT_SECRET="$secret" setsid node dist/apps/launcher/main.js >"$tmp/service.log" 2>&1
  ) &
  service_pgid=$!
  api="http://127.0.0.1:$api_port"
  for _ in $(seq 1 480); do curl -sf -o /dev/null "$api/readiness" && break; sleep 0.25; done
  curl -sf -o /dev/null "$api/readiness" || { echo "$name: the service did not become ready" >&2; tail -n 20 "$tmp/service.log" >&2; exit 1; }
}

# stop_service: SIGTERM to the service's process group (the launcher stops its apps, then the devnet
# node), SIGKILL to what is left after 10 s; nothing when it was never started.
stop_service() {
  [ -n "$service_pgid" ] || return 0
  kill -TERM -- "-$service_pgid" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 -- "-$service_pgid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL -- "-$service_pgid" 2>/dev/null
}
