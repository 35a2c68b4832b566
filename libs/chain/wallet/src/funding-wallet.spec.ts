import { randomBytes } from 'node:crypto';
import { resolvePartitions } from '@proofline/shared-redis';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { FundingPool } from './funding-pool';
import { refuseUnpartitionedPool } from './funding-wallet';

/** `count` free UTXOs of 1,000 satoshis with random parents (the pool only tracks outpoints). */
const fund = (pool: FundingPool, count: number) =>
  pool.add(Array.from({ length: count }, () => ({ txId: randomBytes(32).toString('hex'), vout: 0, satoshis: 1000 })));

describe('refuseUnpartitionedPool: several partitions never start beside the one-partition layout', () => {
  const prefix = uniquePrefix('layout');
  const { redis, cleanup } = testRedis(prefix);
  afterAll(cleanup);

  it('refuses partitions over a pool of REDIS_PARTITIONS=1, accepts one partition over it and partitions over their own', async () => {
    const one = `${prefix}:one`;
    await fund(new FundingPool(redis, { prefix: one, address: 'layout', partitions: 1 }), 3);
    await expect(refuseUnpartitionedPool(redis, one, 64)).rejects.toThrow(/REDIS_PARTITIONS=64.*redis migrate-keys/);
    await expect(refuseUnpartitionedPool(redis, one, 1)).resolves.toBeUndefined();
    // What an unset REDIS_PARTITIONS resolves over it: 1 (shared-redis spells the pool's key).
    await expect(resolvePartitions(redis, one, undefined)).resolves.toEqual({ count: 1, source: 'one-partition-pool' });

    const many = `${prefix}:many`;
    await fund(new FundingPool(redis, { prefix: many, address: 'layout', partitions: 8 }), 16);
    await expect(refuseUnpartitionedPool(redis, many, 8)).resolves.toBeUndefined();
    // A fresh deployment holds no pool at all.
    await expect(refuseUnpartitionedPool(redis, `${prefix}:fresh`, 64)).resolves.toBeUndefined();
  });
});
