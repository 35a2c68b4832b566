import { walletKeys } from '@proofline/chain-wallet';
import { RecordStore, recordsKeys } from '@proofline/records-data-access';
import { memoryRecords } from '@proofline/records-feature/testing';
import { fundPool } from '@proofline/records-testing';
import { ManualClock } from '@proofline/shared-config';
import { keyTag, slotOf } from '@proofline/shared-redis';
import { keysMatching, testRedis, uniquePrefix } from '@proofline/shared-testing';
import { migrateToPartitions } from './partition-migration';

const caller = { tenant: 't1' };
const body = (s: string) => ({ body: Buffer.from(s), encode: undefined });
const PARTITIONS = 8;

/**
 * A deployment written with one partition (everything under {rec}, as before partitions) moved
 * into 8 by `redis migrate-keys`' partition step: every record, chain, outbox entry and pool UTXO
 * is found where the partitioned service looks for it, the pool holds exactly what it held, and
 * the service writes on.
 */
describe('migrateToPartitions', () => {
  const prefix = uniquePrefix('partmig');
  const { redis, cleanup } = testRedis(prefix);
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  afterAll(cleanup);

  const service = (partitions: number) => memoryRecords(redis, prefix, clock, { partitions });

  it('moves records, chains, outbox and pool into partitions; idempotent; the service writes on', async () => {
    // The one-partition deployment: records in the outbox, a chain of three, unsettled funding,
    // free UTXOs and one leased by a writer that died.
    const before = service(1);
    await fundPool(before.pool, 30, 1000);
    const independent = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => before.writes.writeIndependent(caller, body(`r${i}`))),
    );
    const created = await before.writes.createLinked(caller, body('v1'));
    const v2 = await before.writes.updateLinked(caller, created.txId, {
      ...body('v2'),
      updateToken: created.updateToken,
    });
    const v3 = await before.writes.updateLinked(caller, v2.txId, { ...body('v3'), updateToken: v2.updateToken });
    await before.store.settle(independent[0]!.txId, clock.now());
    const lease = await before.pool.reserve({ owner: 'dead writer', minSatoshis: 1000 });
    expect(lease.status).toBe('reserved');
    const poolBefore = await before.pool.status();
    const ids = [...independent.map((r) => r.txId), created.txId, v2.txId, v3.txId];
    const metaBefore = await before.store.metaMany(ids);
    const rawBefore = await before.store.rawTxMany(ids);
    const rec = recordsKeys(prefix);
    const dueBefore = await redis.zrange(rec.outbox, 0, -1, 'WITHSCORES');
    expect(dueBefore).toHaveLength(2 * (ids.length - 1));

    // A dry run counts and changes nothing.
    const dry = await migrateToPartitions(redis, prefix, PARTITIONS, { dryRun: true });
    expect(dry).toMatchObject({ records: 8, chains: 1, outboxEntries: 7, freeUtxos: 21, leasesFreed: 1 });
    expect(dry.unsettledTransactions).toBe(8);
    expect(await redis.exists(rec.record(created.txId))).toBe(1);

    const report = await migrateToPartitions(redis, prefix, PARTITIONS, { batch: 3 });
    expect(report).toEqual(dry);

    // Nothing of the records or the pool is left under {rec}.
    const left = await keysMatching(redis, `${keyTag(prefix, 'rec')}:*`);
    expect(left).toEqual([]);

    const after = service(PARTITIONS);
    expect(await after.store.metaMany(ids)).toEqual(metaBefore);
    expect(await after.store.rawTxMany(ids)).toEqual(rawBefore);
    // A chain lives in its create's partition, with its list.
    const unit = await after.store.partitionOf(created.txId);
    expect(after.store.partitions.indexOf(unit!)).toBeGreaterThanOrEqual(0);
    for (const id of [v2.txId, v3.txId]) expect(await after.store.partitionOf(id)).toBe(unit);
    expect(await after.store.chain(created.txId)).toEqual([created.txId, v2.txId, v3.txId]);
    // The outbox entries kept their due times, each in its record's partition.
    const due: string[] = [];
    for (const u of after.store.partitions.units)
      due.push(...(await redis.zrange(recordsKeys(prefix, u).outbox, 0, -1, 'WITHSCORES')));
    const pairs = (flat: string[]) =>
      Object.fromEntries(flat.flatMap((v, i) => (i % 2 === 0 ? [[v, flat[i + 1]]] : [])));
    expect(pairs(due)).toEqual(pairs(dueBefore));
    expect(await after.store.outboxSize()).toBe(7);

    // The pool holds what it held (the dead writer's lease is free again), spread over shards
    // whose counters match their contents; every unsettled transaction is in its record's shard.
    const poolAfter = await after.pool.status();
    expect(poolAfter).toEqual({
      ...poolBefore,
      free: { count: poolBefore.free.count + 1, satoshis: poolBefore.free.satoshis + 1000 },
      leased: { count: 0, satoshis: 0 },
    });
    const shards = (await after.pool.freeSatoshisByShard()).filter((sats) => sats > 0);
    expect(shards.length).toBeGreaterThan(1);
    for (const { txId } of await after.pool.unsettled(100)) {
      const shard = await after.store.partitionOf(txId);
      expect(await redis.zscore(walletKeys(prefix, shard!).txs, txId)).not.toBeNull();
      expect(slotOf(walletKeys(prefix, shard!).txs)).toBe(slotOf(recordsKeys(prefix, shard!).record(txId)));
    }
    // Confirm finds a migrated transaction's shard: its change is free.
    expect(await after.pool.confirm(v3.txId)).toBe(1);

    // Again: nothing to do, nothing changes.
    expect(await migrateToPartitions(redis, prefix, PARTITIONS)).toMatchObject({
      records: 0,
      chains: 0,
      unsettledTransactions: 0,
      freeUtxos: 0,
    });
    expect(await after.pool.status()).toMatchObject({ balance: poolAfter.balance });

    // The partitioned service writes on: the chain's update goes to the chain's partition, a
    // second update of the same version is refused.
    const v4 = await after.writes.updateLinked(caller, v3.txId, { ...body('v4'), updateToken: v3.updateToken });
    expect(await after.store.partitionOf(v4.txId)).toBe(unit);
    await expect(
      after.writes.updateLinked(caller, v3.txId, { ...body('v4 again'), updateToken: v3.updateToken }),
    ).rejects.toMatchObject({ errorCode: 'NOT_LINKED_RECORDS_END' });
    const fresh = await after.writes.writeIndependent(caller, body('after'));
    expect(await new RecordStore(redis, prefix, { partitions: PARTITIONS }).meta(fresh.txId)).toMatchObject({
      tenant: 't1',
    });
  });
});
