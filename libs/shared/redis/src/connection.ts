import { Redis } from 'ioredis';
import type { Cluster, RedisOptions } from 'ioredis';

export { Cluster, Redis } from 'ioredis';

/**
 * A connection to the service's Redis: one server or a Redis Cluster. Code that reads or writes
 * takes this type and never asks which; only connection factories and whole-keyspace walks
 * (SCAN over every master) care.
 */
export type RedisClient = Redis | Cluster;

/**
 * Opens an ioredis connection. `maxRetriesPerRequest: null` is what BullMQ workers require;
 * request-path connections pass a finite number so a Redis outage turns into a fast 503
 * rather than a hang.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { lazyConnect: false, enableAutoPipelining: true, ...options });
}

/** Bound of every request-path command (ms): a frozen server answers 503 within about a second. */
export const REQUEST_COMMAND_TIMEOUT_MS = 1000;

/**
 * Options of a request-path connection (API and GraphQL commands, their BullMQ queues: never a
 * blocking read). Choices, so that a Redis outage is a 503 within about a second and never a hang:
 * - `commandTimeout`: every command, including one waiting in the offline queue, rejects after
 *   {@link REQUEST_COMMAND_TIMEOUT_MS} ("Command timed out"): the only bound against a server that
 *   accepts the connection but does not answer (SIGSTOP, a long AOF fsync, a busy script).
 * - `maxRetriesPerRequest: 1`: a command queued while the connection is down fails after one
 *   reconnection attempt (MaxRetriesPerRequestError) rather than after three.
 * - `enableOfflineQueue` stays on: a command issued during a sub-second reconnection (Redis
 *   restarted) is sent once the connection is back instead of failing; the timeout bounds it.
 * - `connectTimeout` 1 s and a reconnection back-off capped at 500 ms: the service is back
 *   within half a second of Redis (the default cap, 2 s, would add up to 2 s of 503s).
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
 * as BullMQ workers require; no auto-pipelining, BullMQ batches its own calls). BullMQ shares it
 * and never closes it: the app closes it after its workers and queues.
 */
export function createBullRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, ...options });
}

/** Redis connection options (not a shared instance) for BullMQ queues and workers. */
export function bullConnection(url: string): RedisOptions & { maxRetriesPerRequest: null } {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.pathname && u.pathname.length > 1 ? { db: Number(u.pathname.slice(1)) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}

/** The servers that hold keys: every master of a cluster, or the one server. */
export function masters(redis: RedisClient): Redis[] {
  return redis instanceof Redis ? [redis] : redis.nodes('master');
}

/**
 * Deletes every key under `prefix:` with SCAN + UNLINK on every master (tests; never FLUSHALL a
 * shared Redis). Keys are unlinked one command each, so keys of different slots never meet in one
 * command.
 */
export async function deleteByPrefix(redis: RedisClient, prefix: string): Promise<number> {
  let removed = 0;
  for (const node of masters(redis)) {
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
 * previous pipeline's answer. Applied again on every (re)connection's new socket.
 */
export function coalesceWrites<T extends Redis>(redis: T): T {
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
