import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { deleteByPrefix } from '@proofline/shared-redis';

/** URL of the private redis-server started by jest's global setup. */
export function testRedisUrl(): string {
  const url = process.env['PROOFLINE_TEST_REDIS_URL'];
  if (!url) throw new Error('PROOFLINE_TEST_REDIS_URL is not set: run tests through jest (global setup starts Redis).');
  return url;
}

/** A key prefix unique to one test file or case, so suites never see each other's data. */
export function uniquePrefix(label = 't'): string {
  return `${label}-${randomBytes(5).toString('hex')}`;
}

/** An ioredis client on the test Redis plus a cleanup that removes only `prefix`'s keys. */
export function testRedis(prefix: string): { redis: Redis; cleanup: () => Promise<void> } {
  const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 3 });
  return {
    redis,
    cleanup: async () => {
      await deleteByPrefix(redis, prefix);
      await redis.quit();
    },
  };
}

/** Polls `probe` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
