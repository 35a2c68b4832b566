import { Queue, Worker } from 'bullmq';
import type { Clock } from '@proofline/shared-config';
import {
  CHAIN_BLOCK_JOB,
  CHAIN_BLOCK_JOB_OPTIONS,
  CHAIN_BLOCK_SCHEDULER_ID,
  chainBlockJob,
} from '@proofline/chain-domain';
import type { ChainBlockResult } from '@proofline/chain-domain';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { Logger } from '@proofline/shared-logger';
import type { Redis } from '@proofline/shared-redis';
import type { DevnetBlockProducer } from './block-producer';

export interface BlockProducerWorkerOptions {
  /**
   * The app's BullMQ connection (`maxRetriesPerRequest: null`). Shared, not owned: close() leaves
   * it open (BullMQ duplicates it for the worker's blocking reads and closes that copy).
   */
  readonly connection: Redis;
  readonly redisPrefix: string;
  readonly blockIntervalMs: number;
  readonly producer: DevnetBlockProducer;
  readonly clock: Clock;
  readonly logger?: Logger;
}

export interface RunningBlockProducer {
  /** Stops taking ticks (the scheduler stays: another worker, or the next start, keeps it). */
  close(): Promise<void>;
}

/**
 * Runs the devnet block producer as a BullMQ job scheduler: every process upserts the same
 * scheduler (`every: blockIntervalMs`) and runs a concurrency-1 worker, and BullMQ hands each
 * tick to exactly one of them, so one block is produced per interval however many run. A tick
 * that finds the tip moved (a concurrent producer) retries inside `produceBlock`; its CAS commit
 * keeps the chain linear regardless.
 */
export async function startBlockProducerWorker(o: BlockProducerWorkerOptions): Promise<RunningBlockProducer> {
  const { connection } = o;
  const prefix = bullPrefix(o.redisPrefix);
  const queue = new Queue(QUEUES.chainBlocks, { connection, prefix });
  await queue.upsertJobScheduler(
    CHAIN_BLOCK_SCHEDULER_ID,
    { every: o.blockIntervalMs },
    { name: CHAIN_BLOCK_JOB, data: {}, opts: CHAIN_BLOCK_JOB_OPTIONS },
  );
  const worker = new Worker<unknown, ChainBlockResult>(
    QUEUES.chainBlocks,
    async (job) => {
      chainBlockJob.parse(job.data);
      const result = await o.producer.produceBlock(o.clock.now());
      if (result.status === 'produced')
        o.logger?.debug({ height: result.height, txCount: result.txCount }, 'block produced');
      else o.logger?.warn({ reason: result.reason }, 'block production lost every race this tick');
      return result;
    },
    { connection, prefix, concurrency: 1 },
  );
  worker.on('failed', (job, err) => o.logger?.error({ err: err.message, jobId: job?.id }, 'block production failed'));
  await worker.waitUntilReady();
  return {
    close: async () => {
      await worker.close();
      await queue.close();
    },
  };
}
