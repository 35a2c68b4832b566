import { Queue } from 'bullmq';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { Clock } from '@proofline/shared-config';
import type { RedisClient } from '@proofline/shared-redis';
import { MAX_PUBLISH_BATCH, RECORDS_PUBLISH_JOB, RECORDS_PUBLISH_OPTIONS } from '@proofline/records-domain';
import type { RecordsPublishJob } from '@proofline/records-domain';
import type { RecordStore } from '@proofline/records-data-access';
import type { PublishQueue } from '@proofline/records-feature';

/**
 * Approximate cap of the publication queue's BullMQ events stream (BullMQ's default: 10,000).
 * Nothing reads these events (no QueueEvents on this queue); every job adds 3–4 of ~150 B, so the
 * default kept ~1.5–2 MB of Redis for nothing. Stored in the queue's meta hash, so the workers'
 * scripts trim to it too.
 */
export const PUBLISH_EVENTS_MAX_LEN = 1000;

/**
 * How long after its batch job is added an outbox entry counts as carried by it: the sweeper
 * re-enqueues (as a single job) only what is still unpublished that long after.
 */
export const SWEEP_DEFER_MS = 60_000;

/**
 * The producer of publication: a BullMQ queue on the app's connection (shared: close() closes
 * the queue, the app closes the connection after it).
 *
 * Group commit: `enqueue` calls join one `{ txIds }` job (jobId `batch-<first txId>`) added in
 * one round trip, so a worker runs one BullMQ job cycle, one `/v1/txs` and one chain follow for
 * many records instead of one each. A batch gathers for `coalesceMs` after its first record
 * (`PUBLISH_COALESCE_MS`; 0: what arrives within one event-loop turn), and whatever arrives while
 * an add is in flight forms the next batch. The window matters for records that arrive one at a
 * time (a client updating its chain). Each caller's promise settles when its batch is in Redis;
 * the write use cases do not wait for it (the records are durable before this runs: the outbox),
 * and a lost batch is the sweeper's to find.
 */
export class BullPublishQueue implements PublishQueue {
  readonly queue: Queue;
  private pending: { txId: string; unit: string | undefined; done: (err?: unknown) => void }[] = [];
  private flushing: Promise<void> | null = null;

  /**
   * `prefix` is the deployment's (or test's) Redis prefix; BullMQ's is derived from it.
   * `onAdded` runs after each batch is in Redis (the sweep of those records is deferred: batch
   * jobs have no per-txId jobId the sweeper's re-enqueue could dedupe against).
   */
  constructor(
    connection: RedisClient,
    prefix: string,
    private readonly options: {
      readonly onAdded?: (txIds: readonly string[]) => Promise<void>;
      readonly coalesceMs?: number;
    } = {},
  ) {
    this.queue = new Queue(QUEUES.recordsPublish, {
      connection,
      prefix: bullPrefix(prefix, QUEUES.recordsPublish),
      streams: { events: { maxLen: PUBLISH_EVENTS_MAX_LEN } },
    });
  }

  /**
   * `unit`: the records partition the writer stored the record in (its txId index entry); a batch
   * whose records all have one carries them, and its publisher reads no index.
   */
  enqueue(txId: string, unit?: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ txId, unit, done: (err) => (err === undefined ? resolve() : reject(err as Error)) });
      if (!this.flushing) this.flushing = this.flush();
    });
  }

  /**
   * One `{ txIds }` job that carries on a chain follow (jobId `follow-<first txId>`: handing the
   * same records on twice while the first job waits is a no-op). `units`: each record's partition
   * where the caller knows it (carried when it knows all of them).
   */
  async handOff(txIds: readonly string[], units?: readonly (string | undefined)[]): Promise<void> {
    if (txIds.length === 0) return;
    await this.addBatch('follow', txIds, units);
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
        await this.addBatch(
          'batch',
          txIds,
          batch.map((b) => b.unit),
        );
        for (const b of batch) b.done();
        await this.options.onAdded?.(txIds).catch(() => undefined);
      } catch (err) {
        for (const b of batch) b.done(err ?? new Error('enqueue failed'));
      }
    }
    this.flushing = null;
  }

  /** One `{ txIds }` job, jobId `<kind>-<first txId>`, with `units` when every record has one. */
  private async addBatch(
    kind: 'batch' | 'follow',
    txIds: readonly string[],
    units: readonly (string | undefined)[] = [],
  ): Promise<void> {
    const known = units.length === txIds.length && units.every((u) => u !== undefined);
    const data: RecordsPublishJob = known ? { txIds: [...txIds], units: units as string[] } : { txIds: [...txIds] };
    await this.queue.add(RECORDS_PUBLISH_JOB, data, {
      ...RECORDS_PUBLISH_OPTIONS,
      jobId: `${kind}-${txIds[0] ?? ''}`,
    });
  }
}

/**
 * The producer as publication runs it: once a batch or hand-off job carries records, the outbox
 * sweeper leaves them alone for SWEEP_DEFER_MS.
 */
export function deferringQueue(
  connection: RedisClient,
  prefix: string,
  store: Pick<RecordStore, 'deferSweep'>,
  clock: Clock,
  coalesceMs?: number,
): BullPublishQueue {
  return new BullPublishQueue(connection, prefix, {
    ...(coalesceMs === undefined ? {} : { coalesceMs }),
    onAdded: (txIds) => store.deferSweep(txIds, new Date(clock.now().getTime() + SWEEP_DEFER_MS)),
  });
}
