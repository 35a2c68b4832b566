import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, Command, RedisOptions } from 'ioredis';
import { sharedKeys } from './keys';
import { waitOutMigrationsInPipelines } from './pipeline-ask';
import { resolveRedis } from './topology';
import type { ClusterDeployment, RedisDeployment, RedisTarget } from './topology';

export { Cluster, Redis } from 'ioredis';

/**
 * A connection to the service's Redis: one server or a Redis Cluster. Code that reads or writes
 * takes this type and never asks which; only the factory below and whole-keyspace walks
 * ({@link masters}) care.
 */
export type RedisClient = Redis | Cluster;

/**
 * Opens a connection to ONE server (no cluster support: a cluster node would answer MOVED).
 * For the service's Redis use {@link connectRedis} / {@link openRedis}; this is for a server a
 * caller knows to be standalone (a proxy in a test, the devnet's own redis-server).
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { lazyConnect: false, enableAutoPipelining: true, ...options });
}

/**
 * THE connection factory: a client of `deployment` with `options` (ioredis `RedisOptions`, as for
 * one server). On a standalone deployment it is a `Redis`; on a cluster a `Cluster` that:
 * - reads from masters only (`scaleReads: 'master'`: read-your-writes, as on one server);
 * - applies the URL's user, password and TLS, and `options`' per-connection settings
 *   (`commandTimeout`, `maxRetriesPerRequest`, `connectTimeout`, ...), to every node; the NAT map
 *   translates the addresses nodes announce;
 * - takes `retryStrategy` as the whole cluster's reconnection back-off, and `enableOfflineQueue`,
 *   `enableAutoPipelining`, `lazyConnect`, `enableReadyCheck` for the cluster;
 * - with a `commandTimeout`, bounds every command from the moment it is issued, including one
 *   waiting in the cluster's own offline queue while the cluster is not ready (ioredis applies
 *   the timeout only once a command reaches a node, ioredis#1604), and never sends such a command
 *   late: a request-path client answers within the timeout on a cluster exactly as on one server;
 * - answers `KEYS` from every master (ioredis sends it to one random node).
 * The caller owns the client (quit/disconnect), as with `new Redis`.
 */
export function connectRedis(deployment: RedisDeployment, options: RedisOptions = {}): RedisClient {
  const merged: RedisOptions = { lazyConnect: false, enableAutoPipelining: true, ...options };
  if (deployment.kind === 'standalone') return new Redis(deployment.url, merged);
  waitOutMigrationsInPipelines();
  const cluster = new Cluster(
    deployment.startupNodes.map((n) => ({ host: n.host, port: n.port })),
    clusterOptions(deployment, merged),
  );
  if (typeof merged.commandTimeout === 'number') boundQueuedCommands(cluster, merged.commandTimeout);
  keysFromEveryMaster(cluster);
  cluster.once('ready', () => wasReady.add(cluster));
  return cluster;
}

/** {@link connectRedis} on the deployment behind `target` (resolved once per process: `resolveRedis`). */
export async function openRedis(target: RedisTarget, options: RedisOptions = {}): Promise<RedisClient> {
  return connectRedis(await resolveRedis(target), options);
}

/** Delay before a command answered TRYAGAIN (a slot half migrated) is sent again (ms). */
export const TRYAGAIN_RETRY_DELAY_MS = 50;

/** MOVED, ASK and TRYAGAIN answers a cluster client follows for one command before it fails it. */
export const MAX_REDIRECTIONS = 100;

/** Options that belong to the cluster client itself rather than to each node connection. */
function clusterOptions(d: ClusterDeployment, options: RedisOptions): ClusterOptions {
  const { retryStrategy, enableOfflineQueue, enableAutoPipelining, lazyConnect, enableReadyCheck, ...node } = options;
  // What a URL would carry for one server, for every node; a cluster has only database 0.
  const { db: _db, host: _host, port: _port, path: _path, ...perNode } = node;
  return {
    scaleReads: 'master',
    // CLUSTER SLOTS may take longer than ioredis' 1 s default on a busy host; a refresh that times
    // out fails every command queued behind it ("None of startup nodes is available"). Commands
    // keep their own bound (boundQueuedCommands), so a longer refresh never makes a request wait longer.
    slotsRefreshTimeout: 5000,
    // While a slot is being migrated (resharding), a script whose keys are not all on one side
    // is answered TRYAGAIN until the last key has moved, and ioredis retries it on a random node
    // (MOVED, ASK, TRYAGAIN again: about three redirections a round). A short delay and a high
    // redirection count let a request-path command retry for its whole timeout (about 60
    // redirections in 1 s) instead of failing after ioredis' 16; a client without a timeout
    // gives up after about 2 s of TRYAGAIN (docs/redis-cluster.md, "Resharding a live cluster").
    retryDelayOnTryAgain: TRYAGAIN_RETRY_DELAY_MS,
    maxRedirections: MAX_REDIRECTIONS,
    ...(d.natMap ? { natMap: { ...d.natMap } } : {}),
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    ...(enableReadyCheck === undefined ? {} : { enableReadyCheck }),
    ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) } : {}),
    // TLS certificates name the hosts the nodes announce: connect to those names, unresolved.
    ...(d.auth.tls
      ? { dnsLookup: (address: string, done: (err: null, a: string) => void) => done(null, address) }
      : {}),
    redisOptions: {
      ...perNode,
      ...(d.auth.username ? { username: d.auth.username } : {}),
      ...(d.auth.password ? { password: d.auth.password } : {}),
      ...(d.auth.tls ? { tls: {} } : {}),
    },
  };
}

/** When each command was first handed to a bounded cluster client (ms). */
const issuedAt = new WeakMap<Command, number>();

/**
 * Gives every command of `cluster` its timeout when it is ISSUED (ioredis starts it only when a
 * node gets the command, so one queued while the cluster is down or refreshing would wait
 * forever), and drops a plain command whose timeout passed instead of sending it late: one that
 * waited in the cluster's offline queue until the cluster was back, and one that ioredis would
 * send again to follow a TRYAGAIN, ASK or MOVED answer (it keeps following them after the
 * timeout, so a write answered "Command timed out" during a slot migration would otherwise be
 * applied once the slot has moved, seconds after its caller was told it failed). A pipeline's
 * commands are sent together, so they are left to their own timers.
 */
function boundQueuedCommands(cluster: Cluster, ms: number): void {
  const late = (command: Command, stream: unknown): boolean => {
    const first = issuedAt.get(command);
    return first !== undefined && !stream && Date.now() - first >= ms;
  };
  const send = cluster.sendCommand.bind(cluster);
  cluster.sendCommand = (command: Command, stream?: Parameters<Cluster['sendCommand']>[1], node?: unknown) => {
    if (!issuedAt.has(command)) {
      issuedAt.set(command, Date.now());
      command.setTimeout(ms);
    } else if (late(command, stream)) return command.promise;
    return send(command, stream, node);
  };
  // Redirections are sent straight to a node's connection, not through the cluster client.
  const guard = (node: Redis): void => {
    const toNode = node.sendCommand.bind(node);
    node.sendCommand = (command: Command, stream?: Parameters<Redis['sendCommand']>[1]) =>
      late(command, stream) ? command.promise : toNode(command, stream);
  };
  for (const node of cluster.nodes('all')) guard(node);
  cluster.on('+node', guard);
}

/** `cluster.keys(pattern)`: the union of every master's KEYS (for tests and operator tools; never on a request path). */
function keysFromEveryMaster(cluster: Cluster): void {
  const keys = async (pattern: string): Promise<string[]> => {
    const nodes = await masters(cluster);
    return (await Promise.all(nodes.map((n) => n.keys(pattern)))).flat();
  };
  Object.defineProperty(cluster, 'keys', { value: keys, configurable: true, writable: true });
}

/** Bound of every request-path command (ms): a frozen server answers 503 within about a second. */
export const REQUEST_COMMAND_TIMEOUT_MS = 1000;

/**
 * Options of a request-path connection (API and GraphQL commands, their BullMQ queues: never a
 * blocking read). Choices, so that a Redis outage is a 503 within about a second and never a hang:
 * - `commandTimeout`: every command, including one waiting in the offline queue, rejects after
 *   {@link REQUEST_COMMAND_TIMEOUT_MS} ("Command timed out"): the only bound against a server that
 *   accepts the connection but does not answer (SIGSTOP, a long AOF fsync, a busy script). On a
 *   cluster {@link connectRedis} starts it when the command is issued, so a command waiting for
 *   the cluster to be ready is bounded too.
 * - `maxRetriesPerRequest: 1`: a command queued while the connection is down fails after one
 *   reconnection attempt (MaxRetriesPerRequestError) rather than after three.
 * - `enableOfflineQueue` stays on: a command issued during a sub-second reconnection (Redis
 *   restarted) is sent once the connection is back instead of failing; the timeout bounds it.
 * - `connectTimeout` 1 s and a reconnection back-off capped at 500 ms: the service is back
 *   within half a second of Redis (the default cap, 2 s, would add up to 2 s of 503s). On a
 *   cluster the back-off is the whole cluster's (nodes never reconnect alone).
 * - `enableAutoPipelining: false`: ioredis sends an auto-pipeline only after the previous one of
 *   the same slot has answered, and a command's timeout starts when it is sent; against a frozen
 *   server every command queued behind the first pipeline would wait up to twice the timeout.
 *   Without it commands are still written back to back on the one connection (Redis pipelining on
 *   the wire), each with its own timer.
 * A command that timed out may still run when a frozen server resumes (Redis executes what it
 * received): writes are single Lua scripts, so such a write is applied whole or not at all.
 */
export function requestPathOptions(overrides: RedisOptions = {}): RedisOptions {
  return {
    commandTimeout: REQUEST_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    connectTimeout: 1000,
    enableOfflineQueue: true,
    enableAutoPipelining: false,
    retryStrategy: (times: number) => Math.min(50 * times, 500),
    ...overrides,
  };
}

/**
 * Opens the connection an app hands to BullMQ queues and workers (`maxRetriesPerRequest: null`,
 * as BullMQ workers require; no auto-pipelining, BullMQ batches its own calls): a `Cluster` on a
 * cluster deployment, which BullMQ accepts as `connection`. BullMQ shares it and never closes it
 * (for a worker's or QueueEvents' blocking reads it makes and closes a duplicate): the app closes
 * it after its workers and queues.
 */
export function createBullRedis(deployment: RedisDeployment, options: RedisOptions = {}): RedisClient {
  return connectRedis(deployment, { enableAutoPipelining: false, maxRetriesPerRequest: null, ...options });
}

/** Connection states in which a command cannot be answered now. */
const DOWN = new Set(['reconnecting', 'close', 'end']);

/** Cluster clients of {@link connectRedis} that have been ready once. */
const wasReady = new WeakSet<Cluster>();

/**
 * True when `redis` knows, without a round trip, that it cannot answer now: its connection is
 * reconnecting or closed; on a cluster, also when a master that owns slots has no live connection
 * (a killed node is dropped from the client's pool before the cluster client itself notices that
 * every node is gone). For readiness checks: answer not-ready at once instead of after a timeout.
 */
export function knownDown(redis: { readonly status?: string }): boolean {
  if (redis.status !== undefined && DOWN.has(redis.status)) return true;
  if (!(redis instanceof Cluster)) return false;
  // Ready once and not now: it is reading its slot map again (every node was lost), and between
  // its retries it is 'connecting' with fresh node connections that look alive. A first
  // connection still being made is not known down: it gets its bounded ping.
  if (redis.status !== 'ready' && wasReady.has(redis)) return true;
  const live = new Map(redis.nodes('master').map((n) => [`${n.options.host}:${n.options.port}`, n.status]));
  const owners = new Set<string>();
  for (const slot of redis.slots) if (slot?.[0]) owners.add(slot[0]);
  for (const owner of owners) {
    const status = live.get(owner);
    if (status === undefined || DOWN.has(status)) return true;
  }
  return false;
}

/**
 * PING for a readiness check: the one server, or every master of a cluster, each directly (a
 * master this process has not needed yet has no connection whose loss `knownDown` could see; a
 * refused one fails at once). Resolves 'PONG' when all answer.
 */
export async function pingMasters(redis: { ping(): Promise<string> }): Promise<string> {
  if (!(redis instanceof Cluster)) return redis.ping();
  const answers = await Promise.all((await masters(redis)).map((n) => n.ping()));
  return answers.every((a) => a === 'PONG') ? 'PONG' : (answers.find((a) => a !== 'PONG') ?? '');
}

/**
 * The servers that hold keys: every master of a cluster (once the cluster client knows them:
 * it connects first if it has not yet), or the one server.
 */
export async function masters(redis: RedisClient): Promise<Redis[]> {
  if (redis instanceof Redis) return [redis];
  if (redis.status === 'wait') await redis.connect();
  if (redis.status !== 'ready') await untilReady(redis, 10_000);
  return redis.nodes('master');
}

function untilReady(cluster: Cluster, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      cluster.off('ready', onReady);
      cluster.off('end', onEnd);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => done();
    const onEnd = () => done(new Error('the cluster connection ended'));
    const timer = setTimeout(() => done(new Error(`the cluster was not ready within ${ms} ms`)), ms);
    cluster.once('ready', onReady);
    cluster.once('end', onEnd);
  });
}

/**
 * Deletes every key under `prefix:` with SCAN + UNLINK on every master (tests; never FLUSHALL a
 * shared Redis). Keys are unlinked one command each, so keys of different slots never meet in one
 * command.
 */
export async function deleteByPrefix(redis: RedisClient, prefix: string): Promise<number> {
  let removed = 0;
  for (const node of await masters(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) {
        const pipeline = node.pipeline();
        for (const key of keys) pipeline.unlink(key);
        for (const [err, n] of (await pipeline.exec()) ?? []) if (!err) removed += Number(n);
      }
    } while (cursor !== '0');
  }
  return removed;
}

/** Every key matching `pattern`, by SCAN on every master (whole-keyspace reads: operator tools, tests). */
export async function scanKeys(redis: RedisClient, pattern: string, count = 1000): Promise<string[]> {
  const out: string[] = [];
  for (const node of await masters(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      cursor = next;
      out.push(...keys);
    } while (cursor !== '0');
  }
  return out;
}

/** A promise-returning call of a client without its own command timeout did not settle in time. */
export class RedisCallTimeoutError extends Error {
  override readonly name = 'RedisCallTimeoutError';
  constructor(method: string, ms: number) {
    super(`redis call ${method} did not answer within ${ms} ms`);
  }
}

/**
 * Wraps a client that has no command timeout (node-redis v4, behind redis-om): every method that
 * returns a promise rejects with {@link RedisCallTimeoutError} after `ms`. Other members pass
 * through unchanged. The call itself is not cancelled (the client cannot); only the caller stops
 * waiting, which is what a request path needs.
 */
export function withCallTimeout<T extends object>(client: T, ms = REQUEST_COMMAND_TIMEOUT_MS): T {
  const wrapped = new WeakMap<object, unknown>();
  return new Proxy(client, {
    get(target, property, receiver) {
      // `this` = the client itself: node-redis getters read private (#) fields, which a proxy has not.
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      const cached = wrapped.get(fn);
      if (cached) return cached;
      const bounded = function (this: unknown, ...args: unknown[]): unknown {
        const result = fn.apply(this === receiver ? target : this, args);
        if (!(result instanceof Promise)) return result;
        let timer: NodeJS.Timeout | undefined;
        const limit = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new RedisCallTimeoutError(String(property), ms)), ms);
        });
        return Promise.race([result, limit]).finally(() => clearTimeout(timer));
      };
      wrapped.set(fn, bounded);
      return bounded;
    },
  });
}

/**
 * An `error` listener for a connection that logs the first failure of an outage and then at most
 * one line per `everyMs` with the number of errors since (ioredis emits one per reconnection
 * attempt: every 50-500 ms while Redis is away).
 */
export function throttledErrorLog(
  log: (fields: { err: string; repeated: number }, msg: string) => void,
  msg: string,
  everyMs = 10_000,
): (err: Error) => void {
  let last = 0;
  let repeated = 0;
  return (err) => {
    const now = Date.now();
    if (now - last < everyMs) {
      repeated += 1;
      return;
    }
    log({ err: err.message, repeated }, msg);
    last = now;
    repeated = 0;
  };
}

const coalesced = new WeakSet<object>();

/**
 * Sends every command `redis` issues in one event-loop turn in one socket write. ioredis writes
 * each command (or pipeline) to the socket at once: under load an API process answering many
 * requests per turn would make one `write(2)` per command, each waking Redis separately, and
 * socket writes would be the largest single cost of a write request. Here the socket is corked
 * at its first write of a turn and uncorked by `setImmediate`, i.e. after every
 * callback of the current poll phase: commands still leave in the order they were issued, none
 * waits for another's reply, and the latency added is the rest of the current turn (no timer).
 * Unlike ioredis' auto-pipelining, each command keeps its own timeout and nothing waits for a
 * previous pipeline's answer. Applied again on every (re)connection's new socket; on a cluster, to
 * every node connection, present and future.
 */
export function coalesceWrites<T extends RedisClient>(redis: T): T {
  if (redis instanceof Cluster) {
    for (const node of redis.nodes('all')) coalesceWrites(node);
    redis.on('+node', (node: Redis) => coalesceWrites(node));
    return redis;
  }
  const patch = (): void => {
    const stream = (
      redis as unknown as { stream?: { write: (...args: unknown[]) => boolean; cork(): void; uncork(): void } }
    ).stream;
    if (!stream || coalesced.has(stream)) return;
    coalesced.add(stream);
    const write = stream.write;
    let corked = false;
    stream.write = function (this: unknown, ...args: unknown[]): boolean {
      if (!corked) {
        corked = true;
        stream.cork();
        setImmediate(() => {
          corked = false;
          stream.uncork();
        });
      }
      return write.apply(stream, args);
    };
  };
  patch();
  redis.on('connect', patch);
  return redis;
}

// A worker's liveness, beaten through its connection; the API's health route counts the workers
// that beat recently, beside its ping of every master (pingMasters above).

/** How long a heartbeat counts: a worker beats every `HEARTBEAT_EVERY_MS`. */
export const HEARTBEAT_EVERY_MS = 2000;
export const HEARTBEAT_FRESH_MS = 10_000;

/** Starts beating for `instanceId`; returns a stop function that also removes the entry. */
export function startHeartbeat(redis: RedisClient, prefix: string, instanceId: string): () => Promise<void> {
  const key = sharedKeys(prefix).workerHeartbeats;
  const beat = () =>
    redis
      .multi()
      .zadd(key, Date.now(), instanceId)
      .zremrangebyscore(key, '-inf', Date.now() - 10 * HEARTBEAT_FRESH_MS)
      .exec()
      .catch(() => undefined);
  void beat();
  const timer = setInterval(beat, HEARTBEAT_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await redis.zrem(key, instanceId).catch(() => undefined);
  };
}

/** Number of workers that beat within the freshness window. */
export async function liveWorkers(redis: RedisClient, prefix: string, now = Date.now()): Promise<number> {
  return redis.zcount(sharedKeys(prefix).workerHeartbeats, now - HEARTBEAT_FRESH_MS, '+inf');
}

/** Whether `redis` is a Redis Cluster client (ioredis' `Cluster` sets `isCluster`; wrappers keep it). */
export function isClusterClient(redis: RedisClient): boolean {
  return (redis as { readonly isCluster?: unknown }).isCluster === true;
}
