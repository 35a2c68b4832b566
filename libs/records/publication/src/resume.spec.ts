import { Worker } from 'bullmq';
import { recordsKeys } from '@proofline/records-data-access';
import { InMemoryChain } from '@proofline/records-testing';
import type { ChainPublisher } from '@proofline/chain-domain';
import { createLogger } from '@proofline/shared-logger';
import { eventually, killConnections, testBullRedis } from '@proofline/shared-testing';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { PublishQueue } from '@proofline/records-feature';
import { BullPublishQueue, SWEEP_DEFER_MS, deferringQueue } from './producer';
import { publisherTestbed, tenant } from './testing/publisher-testbed';
import { startRecordsPublisher } from './worker';

const logger = createLogger({ level: 'silent', name: 'test' });

/**
 * Publication after a fault: records a batch job carried (their sweep deferred by SWEEP_DEFER_MS)
 * must not wait out the deferral, nor BullMQ's stalled-job check, when the worker holding the job
 * died or Redis came back without it. Each case bounds the wait far below both.
 */
describe('publication resumes at once after a fault (real Redis, real BullMQ)', () => {
  const bed = publisherTestbed('resume', {
    fund: 50,
    producer: (connection, prefix, store, clock) => deferringQueue(connection, prefix, store, clock, 0),
  });
  const { prefix, redis, connection, store, clock, producer, running } = bed;
  const write = (chain: InMemoryChain, queue: PublishQueue, body: string) =>
    bed.records(chain, queue).writes.writeIndependent(tenant, { body: Buffer.from(body), encode: undefined });
  const deferred = async (txId: string) =>
    Number(await redis.zscore(recordsKeys(prefix).outbox, txId)) > clock.now().getTime();
  /** A publisher as the worker app runs it: sweeper timer on, so it resumes at start and on reconnect. */
  const start = (chain: ChainPublisher, conn = connection) => bed.start(chain, { connection: conn });

  it('a new publisher takes over at once the records of a batch held by a worker that died', async () => {
    const chain = new InMemoryChain();
    // The worker that dies: it takes the batch job and never finishes it (BullMQ's default lock, 30 s).
    let taken = 0;
    const dyingConnection = testBullRedis();
    const dying = new Worker(
      QUEUES.recordsPublish,
      () => {
        taken++;
        return new Promise(() => undefined);
      },
      { connection: dyingConnection, prefix: bullPrefix(prefix, QUEUES.recordsPublish) },
    );
    try {
      const { txId } = await write(chain, producer, 'held by a dead worker');
      await eventually(async () => taken === 1 && (await deferred(txId)), 5000);
      await dying.close(true);
      expect(await store.dueOutbox(new Date(clock.now().getTime() + SWEEP_DEFER_MS - 1))).toEqual([]);

      const startedAt = Date.now();
      start(chain);
      await eventually(async () => (await store.state(txId)) === 'published', 4000, 20);
      const tookMs = Date.now() - startedAt;
      expect(tookMs).toBeLessThan(4000);
      expect(chain.accepted.get(txId)).toBe(1);
      expect(await store.outboxSize()).toBe(0);
    } finally {
      await dying.close(true);
      dyingConnection.disconnect();
    }
  });

  it("a running publisher resumes when its Redis connection comes back: records whose job Redis lost don't wait", async () => {
    const chain = new InMemoryChain();
    const own = testBullRedis();
    const publisher = start(chain, own);
    try {
      await eventually(async () => own.status === 'ready', 5000);
      // A record whose batch job was added and deferred its sweep, then lost (as with a Redis that
      // restarted from an AOF written before the job): nothing carries it, and the sweep waits.
      const lost: PublishQueue = { enqueue: async () => undefined };
      const { txId } = await write(chain, lost, 'job lost with Redis');
      await store.deferSweep([txId], new Date(clock.now().getTime() + SWEEP_DEFER_MS));
      expect(await publisher.sweep()).toBe(0);

      const reconnected = new Promise<void>((resolve) => own.once('ready', () => resolve()));
      await killConnections(own, redis);
      await reconnected;
      await eventually(async () => (await store.state(txId)) === 'published', 4000, 20);
      expect(chain.accepted.get(txId)).toBe(1);
    } finally {
      await publisher.close(true);
      running.splice(running.indexOf(publisher), 1);
      own.disconnect();
    }
  });

  it('resume leaves records a live producer is still batching alone and hands out the rest', async () => {
    const chain = new InMemoryChain();
    const lost: PublishQueue = { enqueue: async () => undefined };
    const publisher = startRecordsPublisher({
      connection,
      store,
      prefix,
      chain,
      clock,
      logger,
      concurrency: 2,
      sweepEveryMs: 0,
    });
    running.push(publisher);
    await publisher.worker.pause(true);
    const old = await write(chain, lost, 'accepted long ago, never enqueued');
    clock.advance(6000);
    const fresh = await write(chain, lost, 'accepted just now');
    const carried = await write(chain, lost, 'carried by a batch');
    await store.deferSweep([carried.txId], new Date(clock.now().getTime() + SWEEP_DEFER_MS));

    expect(await publisher.resume()).toBe(2);
    const queue = new BullPublishQueue(connection, prefix);
    try {
      const ids = (await queue.queue.getJobs(['waiting', 'prioritized'])).map((j) => j.id).sort();
      expect(ids).toEqual([old.txId, carried.txId].sort());
      expect(ids).not.toContain(fresh.txId);
    } finally {
      await queue.close();
    }
  });
});
