import { DelayedError, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { Redis } from '@proofline/shared-redis';
import type { ChainPublisher, SubmitResult } from '@proofline/chain-domain';
import {
  MAX_PUBLISH_BATCH,
  RECORDS_PUBLISH_JOB,
  RECORDS_PUBLISH_OPTIONS,
  RecordsPublishJob,
} from '@proofline/records-domain';
import { RecordStore } from '@proofline/records-data-access';
import type { PublishQueue } from './types';

/**
 * Approximate cap of the publication queue's BullMQ events stream (BullMQ's default: 10,000).
 * Nothing reads these events (no QueueEvents on this queue); every job adds 3–4 of ~150 B, so the
 * default kept ~1.5–2 MB of Redis for nothing, which showed as ~580 B per record in the write
 * benchmark's per-record memory figure. Stored in the queue's meta hash, so the workers' scripts
 * trim to it too.
 */
export const PUBLISH_EVENTS_MAX_LEN = 1000;

/**
 * The API side of publication: a BullMQ queue on the app's connection (shared: close() closes
 * the queue, the app closes the connection after it).
 *
 * Group commit: `enqueue` calls join one `{ txIds }` job (jobId `batch-<first txId>`) added in
 * one round trip, so a worker runs one BullMQ job cycle (moveToActive, moveToFinished: Lua scripts
 * on both ends), one `/v1/txs` and one chain follow for many records instead of one each. A batch
 * gathers for `coalesceMs` after its first record (`PUBLISH_COALESCE_MS`; 0: what arrives within
 * one event-loop turn), and whatever arrives while an add is in flight forms the next batch. The
 * window matters for records that arrive one at a time (a client updating its chain): without it
 * each was a job, a `/v1/tx`, a settle and a callback of its own. Each caller's promise settles
 * when its batch is in Redis; the write use cases do not wait for it (the records are durable
 * before this runs: the outbox), and a lost batch is the sweeper's to find.
 */
/**
 * How long after its batch job is added an outbox entry counts as carried by it: the sweeper
 * re-enqueues (as a single job) only what is still unpublished that long after.
 */
export const SWEEP_DEFER_MS = 60_000;

export class BullPublishQueue implements PublishQueue {
  readonly queue: Queue;
  private pending: { txId: string; done: (err?: unknown) => void }[] = [];
  private flushing: Promise<void> | null = null;

  /**
   * `prefix` is the deployment's (or test's) Redis prefix; BullMQ's is derived from it.
   * `onAdded` runs after each batch is in Redis (the API defers those records' outbox sweep:
   * batch jobs have no per-txId jobId the sweeper's re-enqueue could dedupe against).
   */
  constructor(
    connection: Redis,
    prefix: string,
    private readonly options: {
      readonly onAdded?: (txIds: readonly string[]) => Promise<void>;
      readonly coalesceMs?: number;
    } = {},
  ) {
    this.queue = new Queue(QUEUES.recordsPublish, {
      connection,
      prefix: bullPrefix(prefix),
      streams: { events: { maxLen: PUBLISH_EVENTS_MAX_LEN } },
    });
  }

  enqueue(txId: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ txId, done: (err) => (err === undefined ? resolve() : reject(err as Error)) });
      if (!this.flushing) this.flushing = this.flush();
    });
  }

  /**
   * One `{ txIds }` job that carries on a chain follow (jobId `follow-<first txId>`: handing the
   * same records on twice while the first job waits is a no-op).
   */
  async handOff(txIds: readonly string[]): Promise<void> {
    if (txIds.length === 0) return;
    await this.addBatch('follow', txIds);
    await this.options.onAdded?.(txIds).catch(() => undefined);
  }

  /** One job per record, jobId = txId (the sweeper's: re-adding a txId that waits is a no-op). */
  async enqueueMany(txIds: readonly string[]): Promise<void> {
    if (txIds.length === 0) return;
    await this.queue.addBulk(
      txIds.map((txId) => ({
        name: RECORDS_PUBLISH_JOB,
        data: { txId } satisfies RecordsPublishJob,
        opts: { ...RECORDS_PUBLISH_OPTIONS, jobId: txId },
      })),
    );
  }

  /** Resolves once every record handed to `enqueue` so far is in a job in Redis (or its add failed). */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  async close(): Promise<void> {
    await this.idle();
    await this.queue.close();
  }

  private async flush(): Promise<void> {
    // Let the writes finishing in this turn (and within the window) join the batch.
    const windowMs = this.options.coalesceMs ?? 0;
    await new Promise<void>((r) => (windowMs > 0 ? setTimeout(r, windowMs) : setImmediate(r)));
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, MAX_PUBLISH_BATCH);
      const txIds = batch.map((b) => b.txId);
      try {
        await this.addBatch('batch', txIds);
        for (const b of batch) b.done();
        await this.options.onAdded?.(txIds).catch(() => undefined);
      } catch (err) {
        for (const b of batch) b.done(err ?? new Error('enqueue failed'));
      }
    }
    this.flushing = null;
  }

  /** One `{ txIds }` job, jobId `<kind>-<first txId>`. */
  private async addBatch(kind: 'batch' | 'follow', txIds: readonly string[]): Promise<void> {
    await this.queue.add(RECORDS_PUBLISH_JOB, { txIds: [...txIds] } satisfies RecordsPublishJob, {
      ...RECORDS_PUBLISH_OPTIONS,
      jobId: `${kind}-${txIds[0] ?? ''}`,
    });
  }
}

export type PublishOutcome = 'published' | 'already-published' | 'failed-before' | 'unknown';

/**
 * What publication settles besides the record (the funding pool, the confirmation watch list).
 * Both calls MUST be idempotent: a crashed job runs again and calls them again.
 */
export interface PublicationSettlement {
  /** The chain accepted (or already had) `txId`: confirm its funding, watch it for a proof. */
  accepted(txId: string): Promise<void>;
  /**
   * The chain refused `txId` for good (`code`: ARC's code or status, or the records reason), or it
   * will never be sent (`neverSent`: its previous record was rejected). Settle its funding.
   */
  refused(
    txId: string,
    refusal: { readonly code: string; readonly detail: string; readonly neverSent: boolean },
  ): Promise<void>;
}

/**
 * How long a single-job successor whose previous record is unpublished waits before re-checking
 * (sweeper jobs only; a batch's waiting successors are left to the chain follow, below). A
 * fallback: whoever publishes the previous record publishes an already accepted successor right
 * after it ({@link publishTx} follows the chain), so the re-check normally finds it published.
 */
const WAIT_FOR_PREVIOUS_MS = 1000;
/** How many successors one publication follows down a chain before handing the rest on to a new job. */
const FOLLOW_MAX = 1000;
/** Successors published together (one submit batch, parents first) while following a chain. */
const FOLLOW_RUN = 50;

type PublishDeps = {
  store: RecordStore;
  chain: ChainPublisher;
  clock: Clock;
  logger?: Logger;
  settlement?: PublicationSettlement;
  /**
   * Carries on a chain follow that reached FOLLOW_MAX: a new job for the successors still
   * pending. Without it they waited for the outbox sweeper (5 s), and so did every record accepted
   * after them (their own jobs see an unpublished previous record and leave it to the follow).
   */
  handOff?: (txIds: readonly string[]) => Promise<void>;
  /** FOLLOW_MAX unless a test lowers it. */
  followMax?: number;
};

/**
 * Publishes one accepted record: loads its raw transaction, submits it (idempotent by txId),
 * marks it published and removes it from the outbox, then follows its chain (below). A successor
 * whose previous record is not published yet answers `'wait-previous'` (nothing done). Transient
 * faults throw (the job is retried with backoff); a permanent rejection is recorded on the record
 * (status reports `failed`) and throws UnrecoverableError.
 *
 * Following the chain: the settle script reports, atomically with the state change, the
 * successors still pending (a successor's own job may have seen this record unpublished and left
 * it waiting). They are published at once, in chain order and submitted together (one `/v1/txs`,
 * parents first, which ARC accepts), then the successors of the last of them, and so on. A
 * follow-up that fails is left to its own job or the outbox sweeper: this record is published
 * either way.
 */
export async function publishTx(deps: PublishDeps, txId: string): Promise<PublishOutcome | 'wait-previous'> {
  const outcome = await publishOne(deps, txId, false);
  if (typeof outcome === 'string') return outcome;
  let run = outcome.successors;
  const followMax = deps.followMax ?? FOLLOW_MAX;
  for (let followed = 0; run.length > 0 && followed < followMax; followed += run.length) {
    // All read and submitted in this order in one turn: the chain publisher batches them in order.
    const results = await Promise.allSettled(run.map((successor) => publishOne(deps, successor, true)));
    results.forEach((r, i) => {
      if (r.status === 'rejected' && !(r.reason instanceof UnrecoverableError)) {
        deps.logger?.debug(
          { txId: run[i], err: r.reason instanceof Error ? r.reason.message : String(r.reason) },
          'publishing a followed successor failed; its own job or the sweeper retries',
        );
      }
    });
    const last = results[results.length - 1];
    run = last?.status === 'fulfilled' && typeof last.value !== 'string' ? last.value.successors : [];
  }
  if (run.length > 0 && deps.handOff) {
    // Best effort: a hand-off that fails leaves them to the sweeper, as before.
    await deps
      .handOff(run)
      .catch((err: unknown) =>
        deps.logger?.warn(
          { txId, err: err instanceof Error ? err.message : String(err) },
          'handing a chain follow on failed; the sweeper picks it up',
        ),
      );
  }
  return 'published';
}

/**
 * {@link publishTx} for one record, without following its chain: `{ successors }` when it
 * published it. `previousSubmitted`: its previous record was submitted just before it in the same
 * batch (a chain follow), so its state is not checked.
 */
async function publishOne(
  deps: PublishDeps,
  txId: string,
  previousSubmitted: boolean,
): Promise<Exclude<PublishOutcome, 'published'> | 'wait-previous' | { successors: string[] }> {
  const info = await deps.store.publication(txId);
  if (!info) return 'unknown';
  if (info.state === 'published') {
    await deps.store.settle(txId, deps.clock.now());
    return 'already-published';
  }
  if (info.state === 'failed') return 'failed-before';
  if (info.prevTxId && !previousSubmitted) {
    const prevState = await deps.store.state(info.prevTxId);
    if (prevState === 'failed') {
      await refuseSuccessors(deps, txId, await refusePreviousRejected(deps, txId, info.prevTxId));
      throw new UnrecoverableError(`previous record ${info.prevTxId} was rejected`);
    }
    if (prevState !== 'published') return 'wait-previous';
  }
  const result: SubmitResult & { readonly arcCode?: number | string } = await deps.chain.submit({
    txId,
    rawHex: info.rawTx,
  });
  if (result.status === 'accepted' || result.status === 'already-known') {
    // Funding and the watch list first: a crash before the record is settled re-runs the job,
    // which re-sends the same bytes (the chain answers it knows them) and settles again.
    await deps.settlement?.accepted(txId);
    const { successors } = await deps.store.settle(
      txId,
      deps.clock.now(),
      undefined,
      Math.min(FOLLOW_RUN, deps.followMax ?? FOLLOW_MAX),
    );
    return { successors };
  }
  if (result.code === 'MISSING_INPUT') {
    // The spent output may not have reached this chain node yet: retry with backoff.
    throw new Error(`chain reports a missing input for ${txId}: ${result.detail}`);
  }
  await deps.settlement?.refused(txId, {
    code: String(result.arcCode ?? result.code),
    detail: result.detail,
    neverSent: false,
  });
  const { successors } = await deps.store.settle(
    txId,
    deps.clock.now(),
    `${result.code}: ${result.detail}`,
    FOLLOW_RUN,
  );
  deps.logger?.warn(
    { txId, code: result.code, arcCode: result.arcCode, successors: successors.length },
    'record transaction rejected by the chain',
  );
  await refuseSuccessors(deps, txId, successors);
  throw new UnrecoverableError(`${result.code}: ${result.detail}`);
}

const PREVIOUS_REJECTED = 'PREVIOUS_REJECTED: the record this one links to was rejected by the chain';

/**
 * Fails a record whose previous record was rejected (it spends an output that will never exist);
 * returns up to `maxSuccessors` of its pending successors, to be failed next.
 */
async function refusePreviousRejected(
  deps: PublishDeps,
  txId: string,
  prevTxId: string,
  maxSuccessors = FOLLOW_RUN,
): Promise<string[]> {
  await deps.settlement?.refused(txId, {
    code: 'PREVIOUS_REJECTED',
    detail: `previous record ${prevTxId} was rejected`,
    neverSent: true,
  });
  const { successors } = await deps.store.settle(txId, deps.clock.now(), PREVIOUS_REJECTED, maxSuccessors);
  return successors;
}

/**
 * A record failed for good: every successor still pending spends, through the chain, an output
 * that will never exist. They are failed now, in chain order (never sent, so their funding goes
 * back to the pool), instead of each re-checking its previous record once a second until the
 * failure reached it link by link (a long chain took minutes and kept hundreds of jobs cycling).
 * Up to FOLLOW_MAX here; a longer rest is failed by its own jobs as before.
 */
async function refuseSuccessors(deps: PublishDeps, txId: string, successors: readonly string[]): Promise<void> {
  let run = successors;
  let prev = txId;
  for (let failed = 0; run.length > 0 && failed < FOLLOW_MAX; failed += run.length) {
    let next: string[] = [];
    for (const [i, successor] of run.entries()) {
      // The run already lists what follows; only its last record reads the chain further.
      next = await refusePreviousRejected(deps, successor, prev, i === run.length - 1 ? FOLLOW_RUN : 0);
      prev = successor;
    }
    run = next;
  }
}

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
  results.forEach((r, i) => {
    const txId = txIds[i] as string;
    const key = r.status === 'fulfilled' ? r.value : r.reason instanceof UnrecoverableError ? 'failed' : 'error';
    counts[key] = (counts[key] ?? 0) + 1;
    if (r.status === 'fulfilled' && r.value === 'wait-previous') waiting.push(txId);
    if (key === 'error')
      transient.push(`${txId}: ${r.status === 'rejected' ? String((r.reason as Error)?.message ?? r.reason) : ''}`);
  });
  if (waiting.length > 0) await waitFor(waiting);
  if (transient.length > 0)
    throw new Error(
      `${transient.length} of ${txIds.length} records not published yet (${transient.slice(0, 3).join('; ')})`,
    );
  return counts;
}

export interface RecordsPublisherOptions {
  /**
   * The app's BullMQ connection (`maxRetriesPerRequest: null`). Shared, not owned: close() leaves
   * it open (BullMQ duplicates it for the worker's blocking reads and closes that copy).
   */
  readonly connection: Redis;
  /** The app's command connection (records reads and the settle script). */
  readonly redis: Redis;
  /** The deployment's (or test's) Redis prefix; BullMQ's prefix is derived from it. */
  readonly prefix: string;
  readonly chain: ChainPublisher;
  /** Funding settlement and the confirmation watch list (the worker wires the pool and the proof store). */
  readonly settlement?: PublicationSettlement;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly concurrency: number;
  /** Outbox entries older than this are re-enqueued (default 5 s). */
  readonly sweepAfterMs?: number;
  /** How often the sweeper runs (default 2 s); 0 disables it (tests call sweep()). */
  readonly sweepEveryMs?: number;
  /** Successors one job follows before handing the rest on (default FOLLOW_MAX; tests lower it). */
  readonly followMax?: number;
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
  const store = new RecordStore(opts.redis, opts.prefix);
  const prefix = bullPrefix(opts.prefix);
  // Records a hand-off job carries are left alone by the sweeper for a while, as the API's batches are.
  const queue = new BullPublishQueue(opts.connection, opts.prefix, {
    onAdded: (txIds) => store.deferSweep(txIds, new Date(opts.clock.now().getTime() + SWEEP_DEFER_MS)),
  });
  const deps: PublishDeps = {
    store,
    chain: opts.chain,
    clock: opts.clock,
    logger: opts.logger,
    ...(opts.settlement ? { settlement: opts.settlement } : {}),
    handOff: (txIds) => queue.handOff(txIds),
    ...(opts.followMax ? { followMax: opts.followMax } : {}),
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
      return 'txIds' in parsed.data ? publishBatch(deps, parsed.data.txIds, waitFor) : publishRecord(deps, job, token);
    },
    {
      connection: opts.connection,
      prefix,
      concurrency: opts.concurrency,
      ...(opts.lockDuration ? { lockDuration: opts.lockDuration } : {}),
      ...(opts.stalledInterval ? { stalledInterval: opts.stalledInterval } : {}),
    },
  );
  worker.on('failed', (job, err) => {
    if (err instanceof DelayedError || err.name === 'DelayedError') return;
    opts.logger.warn({ txId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'publication attempt failed');
  });
  worker.on('error', (err) => opts.logger.warn({ err: err.message }, 'publisher worker error'));
  const sweepAfterMs = opts.sweepAfterMs ?? 5000;
  const sweep = async (): Promise<number> => {
    const due = await store.dueOutbox(new Date(opts.clock.now().getTime() - sweepAfterMs));
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
            .catch((err: unknown) =>
              opts.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'outbox sweep failed'),
            )
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
