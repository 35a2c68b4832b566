import { randomBytes } from 'node:crypto';
import type { RedisOptions } from 'ioredis';
import { connectRedis, deleteByPrefix } from '../connection';
import type { RedisClient } from '../connection';
import { clusterDeployment } from '../topology';
import type { RedisDeployment } from '../topology';

// This lib's own specs cannot import shared-testing (it depends on this lib): the test Redis the
// jest global setup started, read from its environment as shared-testing's `testRedisDeployment`.

export function testRedisUrl(): string {
  const url = process.env['PROOFLINE_TEST_REDIS_URL'];
  if (!url) throw new Error('PROOFLINE_TEST_REDIS_URL is not set: run tests through jest.');
  return url;
}

export function testDeployment(): RedisDeployment {
  const url = testRedisUrl();
  if (!(process.env['PROOFLINE_TEST_REDIS_TOPOLOGY'] ?? '').startsWith('cluster')) return { kind: 'standalone', url };
  const nodes = (process.env['PROOFLINE_TEST_REDIS_NODES'] ?? new URL(url).host).split(',');
  return clusterDeployment(
    url,
    nodes.map((n) => ({ host: n.slice(0, n.lastIndexOf(':')), port: Number(n.slice(n.lastIndexOf(':') + 1)) })),
  );
}

export function testClient(options: RedisOptions = {}): RedisClient {
  return connectRedis(testDeployment(), options);
}

/**
 * A client of the test Redis for keys under a fresh `<name>-<random>` prefix, and its cleanup (the
 * prefix's keys deleted on every master, then the client quit): shared-testing's `testRedis`,
 * which this lib's specs cannot import.
 */
export function testScope(
  name: string,
  options: RedisOptions = {},
): { prefix: string; redis: RedisClient; cleanup: () => Promise<void> } {
  const prefix = `${name}-${randomBytes(5).toString('hex')}`;
  const redis = testClient(options);
  return {
    prefix,
    redis,
    cleanup: async () => {
      await deleteByPrefix(redis, prefix);
      await redis.quit();
    },
  };
}
