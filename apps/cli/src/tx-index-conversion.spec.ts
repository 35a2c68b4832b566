import { randomBytes } from 'node:crypto';
import { PartitionIndex, legacyTxIndexKey, txIndexField, txIndexKey } from '@proofline/shared-redis';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { convertLegacyTxIndex } from './partition-migration';

/**
 * `redis migrate-keys` rewrites the txId → partition index written before sub-buckets (txId hex →
 * unit, one HASH a bucket) into today's form: every entry answers the same, the old fields are
 * gone, a second run finds nothing to do.
 */
describe('convertLegacyTxIndex', () => {
  const prefix = uniquePrefix('ixconv');
  const { redis, cleanup } = testRedis(prefix);
  afterAll(cleanup);

  it('moves every old entry into the sub-bucketed form; idempotent; readers answer the same throughout', async () => {
    const ids = Array.from({ length: 300 }, () => randomBytes(32).toString('hex'));
    const units = ids.map((_, i) => (i % 5 === 0 ? 'rec' : `r${i % 64}.${i % 4}`));
    for (let i = 0; i < ids.length; i++)
      await redis.hset(legacyTxIndexKey(prefix, ids[i] as string), ids[i] as string, units[i] as string);
    expect(await new PartitionIndex(redis, prefix).lookup(ids)).toEqual(units);

    expect(await convertLegacyTxIndex(redis, prefix, { dryRun: true })).toEqual({ entries: 300 });
    expect(await redis.exists(legacyTxIndexKey(prefix, ids[0] as string))).toBe(1);

    expect(await convertLegacyTxIndex(redis, prefix)).toEqual({ entries: 300 });
    for (const id of ids) expect(await redis.exists(legacyTxIndexKey(prefix, id))).toBe(0);
    const first = ids[1] as string;
    expect(await redis.hget(txIndexKey(prefix, first), txIndexField(first))).toBe(String(1 * 1024 + 1));
    expect(await new PartitionIndex(redis, prefix).lookup(ids)).toEqual(units);

    expect(await convertLegacyTxIndex(redis, prefix)).toEqual({ entries: 0 });
    expect(await new PartitionIndex(redis, prefix).lookup(ids)).toEqual(units);
  });
});
