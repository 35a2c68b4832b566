import { randomBytes } from 'node:crypto';
import { deleteByPrefix, isClusterClient } from './connection';
import type { RedisClient } from './connection';
import { sharedKeys } from './keys';
import { onePartitionPoolKey, resolvePartitions, withResolvedPartitions } from './partition-count';
import { DEFAULT_PARTITIONS } from './partitions';
import { testClient } from './testing/test-redis';

// The topology the jest global setup started: a one-node cluster is a cluster too.
const onCluster = (process.env['PROOFLINE_TEST_REDIS_TOPOLOGY'] ?? '').startsWith('cluster');

describe('resolvePartitions (REDIS_PARTITIONS unset: what the deployment is)', () => {
  const base = `pcount-${randomBytes(4).toString('hex')}`;
  let redis: RedisClient;
  let n = 0;
  const fresh = () => `${base}-${n++}`;

  beforeAll(() => {
    redis = testClient();
  });
  afterAll(async () => {
    for (let i = 0; i < n; i++) await deleteByPrefix(redis, `${base}-${i}`);
    await redis.quit();
  });

  it('set explicitly: that value, whatever the Redis holds', async () => {
    const prefix = fresh();
    await redis.sadd(sharedKeys(prefix).partitionLayouts, '16');
    await redis.hset(onePartitionPoolKey(prefix), 'freeCount', '1');
    expect(await resolvePartitions(redis, prefix, 8)).toEqual({ count: 8, source: 'configured' });
    expect(await resolvePartitions(redis, prefix, 1)).toEqual({ count: 1, source: 'configured' });
  });

  it('a non-empty layout registry: its largest count (before the one-partition pool)', async () => {
    const prefix = fresh();
    await redis.sadd(sharedKeys(prefix).partitionLayouts, '8', '32', '16', 'junk');
    await redis.hset(onePartitionPoolKey(prefix), 'freeCount', '1');
    expect(await resolvePartitions(redis, prefix, undefined)).toEqual({ count: 32, source: 'layouts' });
  });

  it('the one-partition pool: 1 (on a cluster too, until migrate-keys)', async () => {
    const prefix = fresh();
    await redis.hset(onePartitionPoolKey(prefix), 'freeCount', '1');
    expect(await resolvePartitions(redis, prefix, undefined)).toEqual({ count: 1, source: 'one-partition-pool' });
  });

  it(`nothing yet: ${DEFAULT_PARTITIONS} on a cluster, 1 on one Redis`, async () => {
    const prefix = fresh();
    expect(isClusterClient(redis)).toBe(onCluster);
    expect(await resolvePartitions(redis, prefix, undefined)).toEqual(
      onCluster ? { count: DEFAULT_PARTITIONS, source: 'cluster' } : { count: 1, source: 'standalone' },
    );
    // Resolving reads only: it leaves nothing behind that a later resolution would read.
    expect(await redis.exists(sharedKeys(prefix).partitionLayouts)).toBe(0);
    expect(await redis.exists(onePartitionPoolKey(prefix))).toBe(0);
  });

  it('withResolvedPartitions passes the rest of the configuration on', async () => {
    const prefix = fresh();
    const config = { redisPrefix: prefix, redisPartitions: undefined, other: 'kept' };
    expect(await withResolvedPartitions(redis, config)).toEqual({
      redisPrefix: prefix,
      redisPartitions: onCluster ? DEFAULT_PARTITIONS : 1,
      other: 'kept',
    });
  });
});
