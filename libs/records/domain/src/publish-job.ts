import { z } from 'zod';

const txId = z.string().regex(/^[0-9a-f]{64}$/, 'txId must be 64 lowercase hex characters');

/** Most records one publication job carries (one ARC `/v1/txs` batch at most). */
export const MAX_PUBLISH_BATCH = 500;

/**
 * A records partition's hash-tag unit (`rec`, `r12.3`, …) as a job carries it: a short name
 * without the characters a hash tag or a key separator would need.
 */
const unit = z.string().regex(/^[A-Za-z0-9._-]{1,32}$/, 'not a partition unit');

/**
 * Payload of a `records-publish` job:
 * - `{ txIds, units? }`: a batch, enqueued by an API process for the writes it accepted in one
 *   group commit (jobId `batch-<first txId>`); one BullMQ job cycle for many records. `units`,
 *   when present, is the records partition of each txId, in the same order, as the writer stored
 *   it in the txId index: the publisher takes it instead of reading the index (an entry never
 *   changes). Absent (a job without it, or a writer that did not know every record's partition):
 *   the publisher reads the index.
 * - `{ txId }`: one record, jobId = the txId (idempotent enqueueing): the outbox sweeper's, a
 *   successor waiting for the record it spends, and every job enqueued before batches existed.
 */
export const RecordsPublishJob = z.union([
  z
    .object({ txIds: z.array(txId).min(1).max(MAX_PUBLISH_BATCH), units: z.array(unit).optional() })
    .refine((job) => job.units === undefined || job.units.length === job.txIds.length, {
      message: 'units must name one partition per txId',
    }),
  z.object({ txId }),
]);
export type RecordsPublishJob = z.infer<typeof RecordsPublishJob>;

/**
 * The partition each record of a job is in, when the job carries them (`units`, one per txId of
 * `publishJobTxIds`), else null.
 */
export function publishJobUnits(job: RecordsPublishJob): readonly string[] | null {
  return 'units' in job && job.units !== undefined ? job.units : null;
}

/** The records a job carries, in enqueue order. */
export function publishJobTxIds(job: RecordsPublishJob): readonly string[] {
  return 'txIds' in job ? job.txIds : [job.txId];
}

/** Job name on the records-publish queue (`QUEUES.recordsPublish` in shared-jobs). */
export const RECORDS_PUBLISH_JOB = 'publish';

/**
 * Options of every publication job, whoever enqueues it (the API after a write, the outbox
 * sweeper after a crash). Finished jobs are removed: the record hash keeps the state, and a
 * re-enqueued txId finds it already published (idempotent).
 */
export const RECORDS_PUBLISH_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: true,
  removeOnFail: true,
} as const;
