import { z } from 'zod';

/** Payload of a `records-publish` job. Its jobId is the txId (idempotent enqueueing). */
export const RecordsPublishJob = z.object({
  txId: z.string().regex(/^[0-9a-f]{64}$/, 'txId must be 64 lowercase hex characters'),
});
export type RecordsPublishJob = z.infer<typeof RecordsPublishJob>;

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
