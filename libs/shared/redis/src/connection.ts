import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';

export { Redis } from 'ioredis';

/**
 * Opens an ioredis connection. `maxRetriesPerRequest: null` is what BullMQ workers require;
 * request-path connections pass a finite number so a Redis outage turns into a fast 503
 * rather than a hang.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { lazyConnect: false, enableAutoPipelining: true, ...options });
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

/** Deletes every key under `prefix:` with SCAN + UNLINK (tests; never FLUSHALL a shared Redis). */
export async function deleteByPrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let removed = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) removed += await redis.unlink(...keys);
  } while (cursor !== '0');
  return removed;
}
