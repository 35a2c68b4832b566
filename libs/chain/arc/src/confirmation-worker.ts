import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type { RedisClient } from '@proofline/shared-redis';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import { runConfirmationPass } from './confirmation-pass';
import type { ConfirmationPassDeps, ConfirmationPassOptions, ConfirmationPassReport } from './confirmation-pass';
import { arcKeys } from './proof-store';

/** The confirmation scheduler's id on the chain-confirmations queue (one per deployment). */
export const ARC_CONFIRM_SCHEDULER_ID = 'arc-confirmations';
/** Job name of a confirmation run. */
export const ARC_CONFIRM_JOB = 'confirm';
/** Options of every run (set on the scheduler's job template). */
export const ARC_CONFIRM_JOB_OPTIONS = { removeOnComplete: 50, removeOnFail: 50, attempts: 1 } as const;

export interface ConfirmationWorkerOptions {
  /** The app's BullMQ connection (shared, not owned). */
  readonly connection: RedisClient;
  /** The app's command connection (the run lock). */
  readonly redis: RedisClient;
  readonly redisPrefix: string;
  /** ARC_POLL_MS. */
  readonly pollMs: number;
  readonly pass: ConfirmationPassDeps;
  readonly options?: Omit<ConfirmationPassOptions, 'now'>;
  readonly logger?: { debug(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export interface RunningConfirmationWorker {
  /** One pass now, under the same lock (tests, the CLI); null when another run holds the lock. */
  runOnce(): Promise<ConfirmationPassReport | null>;
  close(): Promise<void>;
}

const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
const RENEW =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";

/**
 * The run lock's time to live, renewed every third of it while the run lasts: a worker that dies
 * mid-run holds up the next pass for at most this long (a fixed lock had to outlast the slowest
 * run, and stalled confirmations for 30 s after a crash).
 */
export const CONFIRM_LOCK_MS = 5_000;

/**
 * The confirmation role: every worker upserts the same BullMQ job scheduler (`every: pollMs`)
 * and runs a concurrency-1 worker, so one tick per interval is handed to one worker. A run
 * also takes a Redis lock (`SET NX PX`, token, compare-and-delete), so a run slower than the
 * interval never overlaps the next one on another worker. The holder renews the lock while it
 * runs; it expires on its own within CONFIRM_LOCK_MS of its holder's death.
 */
export async function startConfirmationWorker(o: ConfirmationWorkerOptions): Promise<RunningConfirmationWorker> {
  const prefix = bullPrefix(o.redisPrefix, QUEUES.chainConfirmations);
  const lockKey = arcKeys(o.redisPrefix).confirmLock;
  const lockMs = CONFIRM_LOCK_MS;
  const runOnce = async (): Promise<ConfirmationPassReport | null> => {
    const token = randomUUID();
    if ((await o.redis.set(lockKey, token, 'PX', lockMs, 'NX')) !== 'OK') return null;
    // A renewal that fails (Redis away) is retried on the next beat; a lock lost meanwhile may let
    // another worker's pass overlap this one, which the pass tolerates (its writes are idempotent).
    const beat = setInterval(
      () => {
        o.redis.eval(RENEW, 1, lockKey, token, String(lockMs)).catch(() => undefined);
      },
      Math.floor(lockMs / 3),
    );
    beat.unref();
    try {
      return await runConfirmationPass(o.pass, o.options ?? {});
    } finally {
      clearInterval(beat);
      await o.redis.eval(RELEASE, 1, lockKey, token);
    }
  };
  const queue = new Queue(QUEUES.chainConfirmations, { connection: o.connection, prefix });
  await queue.upsertJobScheduler(
    ARC_CONFIRM_SCHEDULER_ID,
    { every: o.pollMs },
    { name: ARC_CONFIRM_JOB, data: {}, opts: ARC_CONFIRM_JOB_OPTIONS },
  );
  const worker = new Worker<unknown, ConfirmationPassReport | { skipped: true }>(
    QUEUES.chainConfirmations,
    async () => {
      const report = await runOnce();
      if (!report) return { skipped: true };
      if (report.proven || report.refused || report.reorged.length || report.rebroadcast)
        o.logger?.debug({ ...report }, 'confirmation pass');
      return report;
    },
    { connection: o.connection, prefix, concurrency: 1 },
  );
  worker.on('failed', (job, err) =>
    o.logger?.warn({ err: err.message, jobId: job?.id }, 'confirmation pass failed; the next tick retries'),
  );
  worker.on('error', (err) => o.logger?.warn({ err: err.message }, 'confirmation worker error'));
  await worker.waitUntilReady();
  return {
    runOnce,
    close: async () => {
      await worker.close();
      await queue.close();
    },
  };
}
