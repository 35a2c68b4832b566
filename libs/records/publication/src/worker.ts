import { DelayedError, UnrecoverableError, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { RedisClient } from '@proofline/shared-redis';
import type { ChainPublisher } from '@proofline/chain-domain';
import { RecordsPublishJob, publishJobUnits } from '@proofline/records-domain';
import type { RecordStore } from '@proofline/records-data-access';
import { deferringQueue } from './producer';
import type { BullPublishQueue } from './producer';
import { RequestProblemError, publishTx } from './publish';
import type { PublicationPause, PublicationSettlement, PublishDeps, PublishOutcome } from './publish';
import { startSweeper } from './sweeper';

/**
 * How long a single-job successor whose previous record is unpublished waits before re-checking
 * (sweeper jobs only; a batch's waiting successors are left to the chain follow). A fallback:
 * whoever publishes the previous record publishes an already accepted successor right after it
 * ({@link publishTx} follows the chain), so the re-check normally finds it published.
 */
const WAIT_FOR_PREVIOUS_MS = 1000;

/**
 * A single-record job (`{ txId }`): {@link publishTx}; a successor waiting for its previous
 * record moves this job back to delayed (no attempt spent).
 */
export async function publishRecord(
  deps: PublishDeps,
  job: Pick<Job, 'data' | 'moveToDelayed'>,
  token: string | undefined,
): Promise<PublishOutcome> {
  const parsed = RecordsPublishJob.safeParse(job.data);
  if (!parsed.success || !('txId' in parsed.data)) throw new UnrecoverableError('invalid records-publish payload');
  const outcome = await publishTx(deps, parsed.data.txId);
  if (outcome === 'wait-previous') {
    await job.moveToDelayed(Date.now() + WAIT_FOR_PREVIOUS_MS, token);
    throw new DelayedError();
  }
  return outcome;
}

/**
 * A batch job (`{ txIds }`): every record at once (the ARC publisher coalesces the submits into
 * `/v1/txs`). A permanent rejection fails only its record (already recorded by publishTx); a
 * successor whose previous record is not published yet is handed to `waitFor` (the publisher of
 * its previous record follows the chain to it; `waitFor` arms the fallback); any transient fault
 * fails the batch, which BullMQ retries whole (its published records are no-ops the second time).
 */
export async function publishBatch(
  deps: PublishDeps,
  txIds: readonly string[],
  waitFor: (txIds: readonly string[]) => Promise<void>,
): Promise<Record<string, number>> {
  const results = await Promise.allSettled(txIds.map((txId) => publishTx(deps, txId)));
  const counts: Record<string, number> = {};
  const waiting: string[] = [];
  const transient: string[] = [];
  let paused = 0;
  results.forEach((r, i) => {
    const txId = txIds[i] as string;
    const key = r.status === 'fulfilled' ? r.value : r.reason instanceof UnrecoverableError ? 'failed' : 'error';
    counts[key] = (counts[key] ?? 0) + 1;
    if (r.status === 'fulfilled' && r.value === 'wait-previous') waiting.push(txId);
    if (r.status === 'rejected' && r.reason instanceof RequestProblemError) paused++;
    if (key === 'error')
      transient.push(`${txId}: ${r.status === 'rejected' ? String((r.reason as Error)?.message ?? r.reason) : ''}`);
  });
  if (waiting.length > 0) await waitFor(waiting);
  if (transient.length > 0) {
    const message = `${transient.length} of ${txIds.length} records not published yet (${transient.slice(0, 3).join('; ')})`;
    throw paused === transient.length ? new RequestProblemError(message) : new Error(message);
  }
  return counts;
}

/**
 * A batch or follow job that failed for good (its attempts spent, or stalled past BullMQ's limit
 * in a worker too slow to renew its lock): its records still unpublished are made due for the
 * outbox sweeper now (`waitFor`), which re-enqueues them `sweepAfterMs` later. Their sweep was
 * deferred by SWEEP_DEFER_MS (60 s) when the job was added, and nothing else carries them. A
 * record settled meanwhile has left the outbox and stays out. Single jobs (`{ txId }`, the
 * sweeper's) were never deferred: the sweeper finds them anyway.
 */
function handOverFailedBatch(
  job: Pick<Job, 'data' | 'finishedOn' | 'id'>,
  waitFor: (txIds: readonly string[]) => Promise<void>,
  logger: Logger,
): void {
  if (job.finishedOn === undefined) return; // BullMQ retries it
  const parsed = RecordsPublishJob.safeParse(job.data);
  if (!parsed.success || !('txIds' in parsed.data)) return;
  waitFor(parsed.data.txIds).catch((err: unknown) =>
    logger.warn(
      { job: job.id, err: err instanceof Error ? err.message : String(err) },
      'a failed batch was not handed to the sweeper; its records are swept after SWEEP_DEFER_MS',
    ),
  );
}

export interface RecordsPublisherOptions {
  /**
   * The app's BullMQ connection (`maxRetriesPerRequest: null`). Shared, not owned: close() leaves
   * it open (BullMQ duplicates it for the worker's blocking reads and closes that copy).
   */
  readonly connection: RedisClient;
  /** The records store on the app's command connection (records reads and the settle script). */
  readonly store: RecordStore;
  /**
   * The producer hand-offs and sweeps go through (createPublication's). Absent: one of its own on
   * `connection`, closed with the publisher.
   */
  readonly queue?: BullPublishQueue;
  /** The deployment's (or test's) Redis prefix; BullMQ's prefix is derived from it. */
  readonly prefix: string;
  readonly chain: ChainPublisher;
  /** Funding settlement and the confirmation watch list (the worker wires the pool and the proof store). */
  readonly settlement?: PublicationSettlement;
  /** Where a request problem pauses publication (createPublication wires it on Redis). */
  readonly pause?: PublicationPause;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly concurrency: number;
  /** Outbox entries older than this are re-enqueued (default 5 s). */
  readonly sweepAfterMs?: number;
  /**
   * How often the sweeper runs (default 2 s). 0 disables it and the automatic resume at start and
   * after a reconnect (tests call sweep() and resume()).
   */
  readonly sweepEveryMs?: number;
  /** Successors one job follows before handing the rest on (default FOLLOW_MAX; tests lower it). */
  readonly followMax?: number;
  /** Which transactions are mined with a stored proof (the 460 reading's "settled"). */
  readonly proven?: PublishDeps['proven'];
  /**
   * BullMQ lock settings (default PUBLISH_LOCK_MS and PUBLISH_STALLED_CHECK_MS; tests shorten them
   * to exercise stalled-job recovery).
   */
  readonly lockDuration?: number;
  readonly stalledInterval?: number;
}

/**
 * A publish job's lock, renewed by its worker every half of it while the job runs (a slow ARC's
 * answer included). A worker that dies holding a job loses it within this plus one stalled check,
 * instead of BullMQ's 30 s + 30 s, so another worker takes the job over within seconds even when
 * no process restarts to resume it.
 */
export const PUBLISH_LOCK_MS = 10_000;
export const PUBLISH_STALLED_CHECK_MS = 5_000;

export interface RunningPublisher {
  readonly worker: Worker;
  /** Re-enqueues outbox entries accepted more than `sweepAfterMs` ago; returns how many. */
  sweep(): Promise<number>;
  /** Re-enqueues every outbox entry no live producer is batching (sweeper.ts `resume`); returns how many. */
  resume(): Promise<number>;
  close(force?: boolean): Promise<void>;
}

/**
 * Starts the publisher: a BullMQ worker on QUEUES.recordsPublish running the job handlers above,
 * plus the outbox sweeper (sweeper.ts).
 */
export function startRecordsPublisher(opts: RecordsPublisherOptions): RunningPublisher {
  const { store } = opts;
  const prefix = bullPrefix(opts.prefix, QUEUES.recordsPublish);
  // Records a hand-off job carries are left alone by the sweeper for a while, as the API's batches are.
  const queue = opts.queue ?? deferringQueue(opts.connection, opts.prefix, store, opts.clock);
  const deps: PublishDeps = {
    store,
    chain: opts.chain,
    clock: opts.clock,
    logger: opts.logger,
    ...(opts.settlement ? { settlement: opts.settlement } : {}),
    ...(opts.pause ? { pause: opts.pause } : {}),
    // The records followed are in this process's index cache (read to publish their predecessors).
    handOff: (txIds) =>
      queue.handOff(
        txIds,
        txIds.map((txId) => store.index.cached(txId)),
      ),
    ...(opts.followMax ? { followMax: opts.followMax } : {}),
    ...(opts.proven ? { proven: opts.proven } : {}),
  };
  // A batch's successor whose previous record is unpublished needs no job of its own: whoever
  // publishes the previous record follows the chain to it (publishTx; the settle script reports
  // the successor atomically with the state change, so none is missed). The fallback, for a
  // publisher that died between the two, is the outbox: the entry becomes due for the sweeper
  // again (`sweepAfterMs` from now; it was deferred while its batch job carried it). A settle in
  // between removed the entry, and ZADD XX leaves it removed.
  const waitFor = (txIds: readonly string[]) => store.deferSweep(txIds, opts.clock.now());
  const worker = new Worker(
    QUEUES.recordsPublish,
    async (job, token) => {
      const parsed = RecordsPublishJob.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError('invalid records-publish payload');
      if (!('txIds' in parsed.data)) return publishRecord(deps, job, token);
      rememberUnits(store, parsed.data.txIds, publishJobUnits(parsed.data));
      return publishBatch(deps, parsed.data.txIds, waitFor);
    },
    {
      connection: opts.connection,
      prefix,
      concurrency: opts.concurrency,
      lockDuration: opts.lockDuration ?? PUBLISH_LOCK_MS,
      stalledInterval: opts.stalledInterval ?? PUBLISH_STALLED_CHECK_MS,
    },
  );
  worker.on('failed', (job, err) => {
    if (err instanceof DelayedError || err.name === 'DelayedError') return;
    if (job) handOverFailedBatch(job, waitFor, opts.logger);
    // A pause is logged once by the pause itself, not once per record and attempt.
    if (err instanceof RequestProblemError || err.name === 'RequestProblemError') {
      opts.logger.debug({ txId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'publication paused');
      return;
    }
    opts.logger.warn({ txId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'publication attempt failed');
  });
  worker.on('error', (err) => opts.logger.warn({ err: err.message }, 'publisher worker error'));
  const everyMs = opts.sweepEveryMs ?? 2000;
  const sweeper = startSweeper({
    store,
    queue,
    clock: opts.clock,
    logger: opts.logger,
    afterMs: opts.sweepAfterMs ?? 5000,
    everyMs,
  });
  const stopResuming = everyMs > 0 ? resumeOnStartAndReconnect(opts.connection, sweeper.resume, opts.logger) : () => {};
  return {
    worker,
    sweep: sweeper.sweep,
    resume: sweeper.resume,
    close: async (force = false) => {
      stopResuming();
      sweeper.stop();
      await worker.close(force);
      if (!opts.queue) await queue.close();
    },
  };
}

/**
 * The partitions a batch job carries go into the txId index's cache, as if read from the index:
 * the writer stored exactly these entries before the records, and an entry never changes. Every
 * read of the batch's records (publication, settle, the funding confirm, the outbox deferral) then
 * skips the index; without `units` (an older job, a hand-off of records not cached) they read it.
 */
function rememberUnits(store: RecordStore, txIds: readonly string[], units: readonly string[] | null): void {
  if (units === null || store.partitions.single) return;
  txIds.forEach((txId, i) => store.index.remember(txId, units[i] as string));
}

/**
 * Runs `resume` now and each time `connection` is ready again after losing Redis (a restarted or
 * failed-over Redis, a network cut): publication picks up within moments of a fault instead of
 * after timers. One run at a time; a failure is logged and left to the next trigger and the
 * sweeper. Returns the function that stops listening.
 */
function resumeOnStartAndReconnect(connection: RedisClient, resume: () => Promise<number>, logger: Logger): () => void {
  let running = false;
  let lost = false;
  const run = (why: string) => {
    if (running) return;
    running = true;
    resume()
      .then(
        (n) => n > 0 && logger.info({ enqueued: n, why }, 'publication resumed: outbox entries handed to publishers'),
      )
      .catch((err: unknown) =>
        logger.warn({ err: err instanceof Error ? err.message : String(err), why }, 'publication resume failed'),
      )
      .finally(() => {
        running = false;
      });
  };
  const onClose = () => {
    lost = true;
  };
  const onReady = () => {
    if (!lost) return;
    lost = false;
    run('redis reconnected');
  };
  connection.on('close', onClose);
  connection.on('ready', onReady);
  if (connection.status === 'ready') run('publisher started');
  else lost = true;
  return () => {
    connection.off('close', onClose);
    connection.off('ready', onReady);
  };
}
