import { DelayedError, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { ConnectionOptions, Job } from 'bullmq';
import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import { QUEUES, RECORDS_PUBLISH_JOB, RECORDS_PUBLISH_OPTIONS, RecordsPublishJob } from '@proofline/shared-jobs';
import type { ChainPublisher } from '@proofline/chain-domain';
import type { RecordStore } from '@proofline/records-data-access';
import type { PublishQueue } from './service';

/** The API side of publication: a BullMQ queue, jobId = txId. Close it on shutdown. */
export class BullPublishQueue implements PublishQueue {
  readonly queue: Queue;
  constructor(connection: ConnectionOptions, bullPrefix: string) {
    this.queue = new Queue(QUEUES.recordsPublish, { connection, prefix: bullPrefix });
  }
  async enqueue(txId: string): Promise<void> {
    await this.queue.add(RECORDS_PUBLISH_JOB, { txId } satisfies RecordsPublishJob, { ...RECORDS_PUBLISH_OPTIONS, jobId: txId });
  }
  async enqueueMany(txIds: readonly string[]): Promise<void> {
    if (txIds.length === 0) return;
    await this.queue.addBulk(
      txIds.map((txId) => ({ name: RECORDS_PUBLISH_JOB, data: { txId } satisfies RecordsPublishJob, opts: { ...RECORDS_PUBLISH_OPTIONS, jobId: txId } })),
    );
  }
  close(): Promise<void> {
    return this.queue.close();
  }
}

export type PublishOutcome = 'published' | 'already-published' | 'failed-before' | 'unknown';

/** How long a successor waits for its previous record to be published before re-checking. */
const WAIT_FOR_PREVIOUS_MS = 250;

/**
 * Publishes one accepted record: loads its raw transaction, submits it (idempotent by txId),
 * marks it published and removes it from the outbox. A successor waits (without spending an
 * attempt) until the record it spends is published. Transient faults throw (BullMQ retries with
 * backoff); permanent rejections are recorded on the record (status reports `failed`) and throw
 * UnrecoverableError.
 */
export async function publishRecord(
  deps: { store: RecordStore; chain: ChainPublisher; clock: Clock; logger?: Logger },
  job: Pick<Job, 'data' | 'moveToDelayed'>,
  token: string | undefined,
): Promise<PublishOutcome> {
  const parsed = RecordsPublishJob.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError('invalid records-publish payload');
  const { txId } = parsed.data;
  const info = await deps.store.publication(txId);
  if (!info) return 'unknown';
  if (info.state === 'published') {
    await deps.store.settle(txId, deps.clock.now());
    return 'already-published';
  }
  if (info.state === 'failed') return 'failed-before';
  if (info.prevTxId) {
    const prevState = await deps.store.state(info.prevTxId);
    if (prevState === 'failed') {
      await deps.store.settle(txId, deps.clock.now(), 'PREVIOUS_REJECTED: the record this one links to was rejected by the chain');
      throw new UnrecoverableError(`previous record ${info.prevTxId} was rejected`);
    }
    if (prevState !== 'published') {
      await job.moveToDelayed(Date.now() + WAIT_FOR_PREVIOUS_MS, token);
      throw new DelayedError();
    }
  }
  const result = await deps.chain.submit({ txId, rawHex: info.rawTx });
  if (result.status === 'accepted' || result.status === 'already-known') {
    await deps.store.settle(txId, deps.clock.now());
    return 'published';
  }
  if (result.code === 'MISSING_INPUT') {
    // The spent output may not have reached this chain node yet: retry with backoff.
    throw new Error(`chain reports a missing input for ${txId}: ${result.detail}`);
  }
  await deps.store.settle(txId, deps.clock.now(), `${result.code}: ${result.detail}`);
  deps.logger?.warn({ txId, code: result.code }, 'record transaction rejected by the chain');
  throw new UnrecoverableError(`${result.code}: ${result.detail}`);
}

export interface RecordsPublisherOptions {
  readonly connection: ConnectionOptions;
  readonly bullPrefix: string;
  readonly store: RecordStore;
  readonly chain: ChainPublisher;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly concurrency: number;
  /** Outbox entries older than this are re-enqueued (default 5 s). */
  readonly sweepAfterMs?: number;
  /** How often the sweeper runs (default 2 s); 0 disables it (tests call sweep()). */
  readonly sweepEveryMs?: number;
  /** BullMQ lock settings (tests shorten them to exercise stalled-job recovery). */
  readonly lockDuration?: number;
  readonly stalledInterval?: number;
}

export interface RunningPublisher {
  readonly worker: Worker;
  /** Re-enqueues outbox entries accepted more than `sweepAfterMs` ago; returns how many. */
  sweep(): Promise<number>;
  close(force?: boolean): Promise<void>;
}

/**
 * Starts the publisher: a BullMQ worker on QUEUES.recordsPublish plus the outbox sweeper (the
 * transactional outbox: a write whose enqueue was lost, e.g. the API died after the accept
 * script, is enqueued here; jobId = txId keeps it idempotent across all running workers).
 */
export function startRecordsPublisher(opts: RecordsPublisherOptions): RunningPublisher {
  const deps = { store: opts.store, chain: opts.chain, clock: opts.clock, logger: opts.logger };
  const worker = new Worker(QUEUES.recordsPublish, (job, token) => publishRecord(deps, job, token), {
    connection: opts.connection,
    prefix: opts.bullPrefix,
    concurrency: opts.concurrency,
    ...(opts.lockDuration ? { lockDuration: opts.lockDuration } : {}),
    ...(opts.stalledInterval ? { stalledInterval: opts.stalledInterval } : {}),
  });
  worker.on('failed', (job, err) => {
    if (err instanceof DelayedError || err.name === 'DelayedError') return;
    opts.logger.warn({ txId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'publication attempt failed');
  });
  worker.on('error', (err) => opts.logger.warn({ err: err.message }, 'publisher worker error'));
  const queue = new BullPublishQueue(opts.connection, opts.bullPrefix);
  const sweepAfterMs = opts.sweepAfterMs ?? 5000;
  const sweep = async (): Promise<number> => {
    const due = await opts.store.dueOutbox(new Date(opts.clock.now().getTime() - sweepAfterMs));
    await queue.enqueueMany(due);
    return due.length;
  };
  const every = opts.sweepEveryMs ?? 2000;
  let sweeping = false;
  const timer =
    every > 0
      ? setInterval(() => {
          if (sweeping) return;
          sweeping = true;
          sweep()
            .catch((err: unknown) => opts.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'outbox sweep failed'))
            .finally(() => {
              sweeping = false;
            });
        }, every)
      : null;
  timer?.unref();
  return {
    worker,
    sweep,
    close: async (force = false) => {
      if (timer) clearInterval(timer);
      await worker.close(force);
      await queue.close();
    },
  };
}
