import { FundingPool } from '@proofline/chain-wallet';
import { RecordStore } from '@proofline/records-data-access';
import { createRecords } from '@proofline/records-feature';
import { InMemoryChain, fundPool } from '@proofline/records-testing';
import { ManualClock, loadConfig } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { PartitionIndex } from '@proofline/shared-redis';
import { eventually, testBullRedis, testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { BullPublishQueue } from './producer';
import { startRecordsPublisher } from './worker';
import type { RunningPublisher } from './worker';

/**
 * A batch job carries each record's partition (the API's txId index entry): the publisher, in
 * another process with a cold index cache, publishes the batch without reading the index.
 */
describe('publish jobs carry the records partitions (real Redis, real BullMQ)', () => {
  const prefix = uniquePrefix('jobunits');
  const partitions = 4;
  const logger = createLogger({ level: 'silent', name: 'test' });
  const { redis, cleanup } = testRedis(prefix);
  const connection = testBullRedis();
  const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  // The API process: its pool and records share one index (and its cache).
  const apiPool = new FundingPool(redis, { prefix, address: 'test', partitions });
  const producer = new BullPublishQueue(connection, prefix);
  const chain = new InMemoryChain();
  const writes = createRecords({
    config,
    clock,
    redis,
    prefix,
    builder: chain,
    funding: { pool: apiPool, feeRate: () => 1 },
    reader: chain,
    queue: producer,
    logger,
  }).writes;
  const running: RunningPublisher[] = [];
  /** The worker process: a store and pool of its own over a fresh index (nothing cached). */
  const workerSide = () => {
    const index = new PartitionIndex(redis, prefix);
    const pool = new FundingPool(redis, { prefix, address: 'test', partitions, index });
    const store = new RecordStore(redis, prefix, { partitions, index });
    return { index, pool, store };
  };

  beforeAll(() => fundPool(apiPool, 40, 1000));
  afterEach(async () => {
    for (const p of running.splice(0)) await p.close(true);
    await producer.queue.obliterate({ force: true });
  });
  afterAll(async () => {
    await producer.close();
    await connection.quit();
    await cleanup();
  });

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
    const publisher = startRecordsPublisher({
      connection,
      store: worker.store,
      prefix,
      chain,
      clock,
      logger,
      concurrency: 2,
      sweepEveryMs: 0,
    });
    running.push(publisher);
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
    const publisher = startRecordsPublisher({
      connection,
      store: worker.store,
      prefix,
      chain,
      clock,
      logger,
      concurrency: 1,
      sweepEveryMs: 0,
    });
    running.push(publisher);
    await eventually(async () => (await bad.getState()) === 'failed', 10_000);
    expect((await producer.queue.getJob(bad.id ?? ''))?.failedReason).toBe('invalid records-publish payload');
    expect(worker.index.cached('ab'.repeat(32))).toBeUndefined();
  });
});
