import { testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { holdsNothingUnder } from './redis-local';

describe('holdsNothingUnder (a fresh service Redis gets a new devnet chain)', () => {
  const prefix = uniquePrefix('fresh');
  const { redis, cleanup } = testRedis(prefix);
  afterAll(cleanup);

  it('is true with no key under the prefix, false once one exists (keys of other prefixes do not count)', async () => {
    await redis.set(`${prefix}-other:x`, '1');
    expect(await holdsNothingUnder(testRedisUrl(), prefix)).toBe(true);
    await redis.hset(`${prefix}:wallet:counters`, 'freeCount', '1');
    expect(await holdsNothingUnder(testRedisUrl(), prefix)).toBe(false);
    await redis.del(`${prefix}-other:x`);
  });

});
