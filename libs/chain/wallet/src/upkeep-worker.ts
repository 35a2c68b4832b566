import { Queue, Worker } from 'bullmq';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { Logger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import type { LowWaterRequest } from './splitter';
import type { UpkeepDeps, UpkeepReport } from './wallet-upkeep';
import { walletUpkeep } from './wallet-upkeep';

/** The repeatable upkeep job's scheduler id (one scheduler however many workers upsert it). */
export const WALLET_UPKEEP_SCHEDULER_ID = 'wallet-upkeep-every';
export const WALLET_UPKEEP_JOB = 'wallet-upkeep';
/** jobId of an on-demand run: while one waits or runs, more requests add nothing. */
export const WALLET_UPKEEP_ON_DEMAND_ID = 'wallet-upkeep-now';
const JOB_OPTIONS = { removeOnComplete: true, removeOnFail: true, attempts: 1 } as const;

/**
 * Asks the wallet worker for an upkeep run now (a write found the pool empty). Idempotent while a
 * run is waiting: the on-demand job has a fixed id. Owns a queue handle on the app's connection.
 */
export class WalletUpkeepRequester {
  private readonly queue: Queue;

  constructor(connection: RedisClient, redisPrefix: string) {
    this.queue = new Queue(QUEUES.walletUpkeep, { connection, prefix: bullPrefix(redisPrefix, QUEUES.walletUpkeep) });
  }

  async request(): Promise<void> {
    await this.queue.add(WALLET_UPKEEP_JOB, {}, { ...JOB_OPTIONS, jobId: WALLET_UPKEEP_ON_DEMAND_ID });
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

export interface WalletUpkeepWorkerOptions {
  /** The app's BullMQ connection (shared, not owned). */
  readonly connection: RedisClient;
  readonly redisPrefix: string;
  /** Scheduled run interval (default 30 s). */
  readonly everyMs?: number;
  /** Built per run, so each run pays the fee rate of the latest ARC policy. */
  readonly deps: () => Promise<UpkeepDeps>;
  readonly lowWater: LowWaterRequest;
  readonly logger?: Logger;
}

export interface RunningWalletUpkeep {
  /** Stops taking runs (the scheduler stays for the other workers and the next start). */
  close(): Promise<void>;
}

/**
 * Runs {@link walletUpkeep} as a BullMQ job scheduler (every `everyMs`) plus on-demand jobs
 * ({@link WalletUpkeepRequester}). Every worker process upserts the same scheduler and runs a
 * concurrency-1 worker, so a scheduled tick goes to one worker; two runs at the same time
 * (a tick and an on-demand job on two workers) are still safe: the splitter holds a Redis lock
 * (the second run reports `busy`) and every pool step is atomic.
 */
export async function startWalletUpkeepWorker(o: WalletUpkeepWorkerOptions): Promise<RunningWalletUpkeep> {
  const prefix = bullPrefix(o.redisPrefix, QUEUES.walletUpkeep);
  const queue = new Queue(QUEUES.walletUpkeep, { connection: o.connection, prefix });
  await queue.upsertJobScheduler(
    WALLET_UPKEEP_SCHEDULER_ID,
    { every: o.everyMs ?? 30_000 },
    { name: WALLET_UPKEEP_JOB, data: {}, opts: JOB_OPTIONS },
  );
  const worker = new Worker<unknown, UpkeepReport>(
    QUEUES.walletUpkeep,
    async () => {
      const report = await walletUpkeep(await o.deps(), o.lowWater);
      const trouble =
        report.scanError !== undefined || ['rejected', 'unreachable', 'exhausted'].includes(report.split?.status ?? '');
      const scan = report.scan ? { scannedTo: report.scan.scannedTo, imported: report.scan.imported.length } : null;
      o.logger?.[trouble ? 'warn' : 'debug'](
        { swept: report.swept, scan, scanError: report.scanError, split: report.split },
        'wallet upkeep',
      );
      return report;
    },
    { connection: o.connection, prefix, concurrency: 1 },
  );
  worker.on('failed', (job, err) => o.logger?.error({ err: err.message, jobId: job?.id }, 'wallet upkeep failed'));
  await worker.waitUntilReady();
  return {
    close: async () => {
      await worker.close();
      await queue.close();
    },
  };
}
