import { FundingPool } from '@proofline/chain-wallet';
import { RecordStore } from '@proofline/records-data-access';
import { InMemoryChain } from '@proofline/records-testing';
import { PartitionIndex } from '@proofline/shared-redis';
import { eventually } from '@proofline/shared-testing';
import { BullPublishQueue } from './producer';
import { publisherTestbed } from './testing/publisher-testbed';

/**
 * A batch job carries each record's partition (the API's txId index entry): the publisher, in
 * another process with a cold index cache, publishes the batch without reading the index.
 */
describe('publish jobs carry the records partitions (real Redis, real BullMQ)', () => {
  const partitions = 4;
  // The API process: the testbed's pool and records share one index (and its cache).
  const bed = publisherTestbed('jobunits', {
    fund: 40,
    partitions,
    producer: (connection, prefix) => new BullPublishQueue(connection, prefix),
  });
  const { redis, prefix, producer } = bed;
  const chain = new InMemoryChain();
  const writes = bed.records(chain, producer).writes;
  /** The worker process: a store and pool of its own over a fresh index (nothing cached). */
  const workerSide = () => {
    const index = new PartitionIndex(redis, prefix);
    const pool = new FundingPool(redis, { prefix, address: 'test', partitions, index });
    const store = new RecordStore(redis, prefix, { partitions, index });
    return { index, pool, store };
  };

  /** Writes `n` independent records at once (one group commit) and waits for their batch job. */
  const writeBatch = async (n: number) => {
    const written = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        writes.writeIndependent({ tenant: 't1' }, { body: Buffer.from(`r${i}`), encode: 'SHA256' }),
      ),
    );
    await producer.idle();
    return written.map((w) => w.txId);
  };

  it('the batch job names each record partition as the index stores it', async () => {
    const txIds = await writeBatch(6);
    // One job, or a few when the writes finished over several turns (a cluster's extra round trip).
    const jobs = (await producer.queue.getJobs(['waiting'])).map(
      (j) => j.data as { txIds: string[]; units?: string[] },
    );
    const carried = jobs.flatMap((d) => d.txIds);
    expect([...carried].sort()).toEqual([...txIds].sort());
    const units = jobs.flatMap((d) => d.units ?? d.txIds.map(() => 'none'));
    expect(units).toEqual(await new PartitionIndex(redis, prefix).lookup(carried));
    // round robin: the six roots went to more than one partition
    expect(new Set(units).size).toBeGreaterThan(1);
  });

  it('the publisher takes the partitions from the job: with the index entries gone it still publishes', async () => {
    const worker = workerSide();
    const before = await worker.store.outboxSize(); // the first case's records, their job dropped
    const txIds = await writeBatch(5);
    // Without the job's partitions the worker could not find these records any more.
    for (const txId of txIds) await worker.index.forget(txId);
    expect(await worker.store.partitionsOf(txIds)).toEqual(txIds.map(() => null));
    bed.start(chain, { store: worker.store, sweepEveryMs: 0 });
    await eventually(
      async () => (await Promise.all(txIds.map((t) => worker.store.state(t)))).every((s) => s === 'published'),
      10_000,
    );
    for (const txId of txIds) expect(chain.accepted.get(txId)).toBe(1);
    expect(await worker.store.outboxSize()).toBe(before);
  });

  it('a job whose partitions do not match its records is refused as a whole', async () => {
    const bad = await producer.queue.add('publish', { txIds: ['ab'.repeat(32)], units: ['r1.0', 'r2.0'] });
    const worker = workerSide();
    bed.start(chain, { store: worker.store, concurrency: 1, sweepEveryMs: 0 });
    await eventually(async () => (await bad.getState()) === 'failed', 10_000);
    expect((await producer.queue.getJob(bad.id ?? ''))?.failedReason).toBe('invalid records-publish payload');
    expect(worker.index.cached('ab'.repeat(32))).toBeUndefined();
  });
});
