// Shared set-up of this lib's publisher specs (not a spec itself; test code, not exported).
import { FundingPool } from '@proofline/chain-wallet';
import type { ChainPublisher } from '@proofline/chain-domain';
import { RecordStore } from '@proofline/records-data-access';
import { createRecords } from '@proofline/records-feature';
import type { PublishQueue, RecordWrites, Records } from '@proofline/records-feature';
import { fundPool } from '@proofline/records-testing';
import type { InMemoryChain } from '@proofline/records-testing';
import { ManualClock, loadConfig } from '@proofline/shared-config';
import type { Config } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import { testBullRedis, testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import type { BullPublishQueue } from '../producer';
import { startRecordsPublisher } from '../worker';
import type { RecordsPublisherOptions, RunningPublisher } from '../worker';

export const tenant = { tenant: 't1' };

/** Writes `n` updates after `from` (bodies `v0`, `v1`, …), each on the previous; returns `[from, ...updates]`. */
export async function extendChain(
  writes: RecordWrites,
  from: { readonly txId: string; readonly updateToken: string },
  n: number,
): Promise<{ txId: string; updateToken: string }[]> {
  const links = [from];
  for (let i = 0; i < n; i++) {
    const prev = links[links.length - 1]!;
    links.push(
      await writes.updateLinked(tenant, prev.txId, {
        body: Buffer.from(`v${i}`),
        encode: undefined,
        updateToken: prev.updateToken,
      }),
    );
  }
  return links;
}

export interface PublisherTestbed {
  readonly prefix: string;
  /** The test's command connection (records, the pool). */
  readonly redis: RedisClient;
  readonly config: Config;
  /** The BullMQ connection every producer and publisher of the spec shares. */
  readonly connection: RedisClient;
  readonly store: RecordStore;
  /** Starts at 2026-01-01T00:00:00Z; only the spec moves it. */
  readonly clock: ManualClock;
  readonly funding: { readonly pool: FundingPool; feeRate(): number };
  /** The spec's producer, closed after all cases; its queue is emptied after each. */
  readonly producer: BullPublishQueue;
  /** Publishers still running: closed (force) after each case. */
  readonly running: RunningPublisher[];
  /** A publisher on the spec's connection, store and clock (concurrency 2), closed after the case. */
  start(chain: ChainPublisher, options?: Partial<RecordsPublisherOptions>): RunningPublisher;
  /** The records scope over `chain` (builder and reader) and the pool, enqueuing on `queue`. */
  records(chain: InMemoryChain, queue: PublishQueue): Records;
}

/**
 * Real Redis and BullMQ under a fresh prefix, a manual clock, a pool of `fund` fake UTXOs (1000
 * sat) in `partitions` shards and a producer built by `producer`. Call it in a `describe`: it registers the hooks that
 * fund the pool, close each case's publishers and empty the queue, and clean up after all cases.
 */
export function publisherTestbed(
  label: string,
  o: {
    fund: number;
    producer: (connection: RedisClient, prefix: string, store: RecordStore, clock: ManualClock) => BullPublishQueue;
    /** Records partitions of the store and the pool (default 1). */
    partitions?: number;
  },
): PublisherTestbed {
  const prefix = uniquePrefix(label);
  const logger = createLogger({ level: 'silent', name: 'test' });
  const { redis, cleanup } = testRedis(prefix);
  const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const connection = testBullRedis();
  const partitions = o.partitions ?? 1;
  const store = new RecordStore(redis, prefix, { partitions });
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const funding = { pool: new FundingPool(redis, { prefix, address: 'test', partitions }), feeRate: () => 1 };
  const producer = o.producer(connection, prefix, store, clock);
  const running: RunningPublisher[] = [];

  beforeAll(() => fundPool(funding.pool, o.fund, 1000));
  afterEach(async () => {
    for (const p of running.splice(0)) await p.close(true);
    await producer.queue.obliterate({ force: true });
  });
  afterAll(async () => {
    await producer.close();
    await connection.quit();
    await cleanup();
  });

  return {
    prefix,
    redis,
    config,
    connection,
    store,
    clock,
    funding,
    producer,
    running,
    start(chain, options = {}) {
      const p = startRecordsPublisher({ connection, store, prefix, chain, clock, logger, concurrency: 2, ...options });
      running.push(p);
      return p;
    },
    records: (chain, queue) =>
      createRecords({ config, clock, redis, prefix, builder: chain, funding, reader: chain, queue, logger }),
  };
}
