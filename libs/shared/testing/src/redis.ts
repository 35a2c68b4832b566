import { randomBytes } from 'node:crypto';
import type { RedisOptions } from 'ioredis';
import { parseNodeAddress } from '@proofline/shared-config';
import { clusterDeployment, connectRedis, createBullRedis, deleteByPrefix, masters } from '@proofline/shared-redis';
import type { RedisClient, RedisDeployment } from '@proofline/shared-redis';

/**
 * URL of the private Redis started by jest's global setup (tools/jest/redis-servers.js): a
 * standalone server, or the first node of a one- or three-master cluster
 * (`PROOFLINE_TEST_REDIS=standalone|cluster1|cluster3`).
 */
export function testRedisUrl(): string {
  const url = process.env['PROOFLINE_TEST_REDIS_URL'];
  if (!url) throw new Error('PROOFLINE_TEST_REDIS_URL is not set: run tests through jest (global setup starts Redis).');
  return url;
}

/** True when the tests run on a Redis Cluster (`PROOFLINE_TEST_REDIS_TOPOLOGY=cluster1|cluster3`). */
export function testRedisIsCluster(): boolean {
  return (process.env['PROOFLINE_TEST_REDIS_TOPOLOGY'] ?? 'standalone').startsWith('cluster');
}

/**
 * The test Redis as the connection factory takes it, known without asking the server (so specs
 * open clients synchronously): for the test URL, the topology the global setup started (its nodes
 * in `PROOFLINE_TEST_REDIS_NODES`); any other URL (a server a spec started itself) is standalone.
 */
export function testRedisDeployment(url: string = testRedisUrl()): RedisDeployment {
  if (url !== testRedisUrl() || !testRedisIsCluster()) return { kind: 'standalone', url };
  const nodes = (process.env['PROOFLINE_TEST_REDIS_NODES'] ?? new URL(url).host).split(',');
  return clusterDeployment(url, nodes.map(parseNodeAddress));
}

/** A client of the test Redis (`Redis` or `Cluster`, as the topology is) through the production factory. */
export function testRedisClient(options: RedisOptions = {}): RedisClient {
  return connectRedis(testRedisDeployment(), options);
}

/** A BullMQ connection to the test Redis (`createBullRedis`: `maxRetriesPerRequest: null`). The caller closes it. */
export function testBullRedis(options: RedisOptions = {}): RedisClient {
  return createBullRedis(testRedisDeployment(), options);
}

/**
 * The environment a spawned process needs to reach the test Redis: `REDIS_URL`, and on a cluster
 * `REDIS_CLUSTER_NODES` (the child would detect the cluster from the URL alone; naming the nodes
 * also gives it every master at once).
 */
export function testRedisEnv(): Record<string, string> {
  const nodes = process.env['PROOFLINE_TEST_REDIS_NODES'];
  return {
    REDIS_URL: testRedisUrl(),
    ...(testRedisIsCluster() && nodes ? { REDIS_CLUSTER_NODES: nodes } : {}),
  };
}

/** A key prefix unique to one test file or case, so suites never see each other's data. */
export function uniquePrefix(label = 't'): string {
  return `${label}-${randomBytes(5).toString('hex')}`;
}

/** A client of the test Redis ({@link testRedisClient}) plus a cleanup that removes only `prefix`'s keys. */
export function testRedis(prefix: string): { redis: RedisClient; cleanup: () => Promise<void> } {
  const redis = testRedisClient({ maxRetriesPerRequest: 3, enableAutoPipelining: false });
  return {
    redis,
    cleanup: async () => {
      await deleteByPrefix(redis, prefix);
      await redis.quit();
    },
  };
}

/**
 * Every key matching `pattern` (KEYS) on every master, sorted: a cluster client sends KEYS to one
 * node, which holds only its own slots' keys. For specs (KEYS walks the whole keyspace).
 */
export async function keysMatching(redis: RedisClient, pattern: string): Promise<string[]> {
  return (await Promise.all((await masters(redis)).map((node) => node.keys(pattern)))).flat().sort();
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

/**
 * Closes every connection `client` holds to the servers (`CLIENT KILL ID`, sent by `admin` to the
 * node each connection is on), as a network blip or a server restart would: a standalone client
 * reconnects, a cluster client whose every node connection is gone reconnects as a whole; both
 * emit `ready` when back.
 */
export async function killConnections(client: RedisClient, admin: RedisClient): Promise<void> {
  const key = (n: { options: { host?: string; port?: number } }) => `${n.options.host}:${n.options.port}`;
  const admins = new Map((await masters(admin)).map((n) => [key(n), n]));
  const targets = await Promise.all(
    (await masters(client)).map(async (n) => ({ node: admins.get(key(n)), id: String(await n.client('ID')) })),
  );
  for (const { node, id } of targets) {
    if (!node) throw new Error('killConnections: a node of the client is no master the admin knows');
    await node.client('KILL', 'ID', id);
  }
}
