import { Job } from 'bullmq';
import type { Queue, QueueEvents } from 'bullmq';
import { CREATE_KEY_JOB_OPTIONS, CREATE_KEY_JOB_NAME, createKeyResult, sameHash } from '@proofline/identity-domain';
import type { CreateKeyJob, CreateKeyResult } from '@proofline/identity-domain';
import type { KeyReader, KeyWriter } from '@proofline/identity-data-access';
import type { Logger } from '@proofline/shared-logger';
import { identityErrors as E } from './errors';

/**
 * The round trip of a key-creation job to the key worker (which holds the per-tenant limit
 * atomically): enqueue, wait for the answer, and when none comes in time, decide from the
 * stored state alone once no worker can create the key any more.
 */
export class CreateKeyJobs {
  constructor(
    private readonly queue: Queue,
    private readonly queueEvents: QueueEvents,
    private readonly reader: KeyReader,
    private readonly writer: KeyWriter,
    readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  /**
   * Enqueues the creation job and waits for the key worker. On a timeout or failure it waits
   * until Redis TIME is past the job's deadline (after which no worker can create the key),
   * then decides from the stored state alone: the key exists (created) or it never will.
   */
  async run(payload: CreateKeyJob): Promise<CreateKeyResult['outcome']> {
    let job: Job;
    try {
      job = await this.queue.add(CREATE_KEY_JOB_NAME, payload, { ...CREATE_KEY_JOB_OPTIONS, jobId: payload.id });
    } catch (err) {
      throw E.serviceUnavailable(err);
    }
    try {
      const result = createKeyResult.safeParse(await job.waitUntilFinished(this.queueEvents, this.timeoutMs));
      if (result.success) return result.data.outcome;
    } catch (err) {
      this.log.warn(
        { keyId: payload.id, tenant: payload.tenant, err: err instanceof Error ? err.message : String(err) },
        'key worker did not answer in time',
      );
    }
    return this.settleAfterDeadline(payload);
  }

  private async settleAfterDeadline(payload: CreateKeyJob): Promise<CreateKeyResult['outcome']> {
    try {
      for (;;) {
        const wait = payload.deadlineMs - (await this.writer.redisTimeMs()) + 1;
        if (wait <= 0) break;
        await new Promise((r) => setTimeout(r, Math.min(wait, 1000)));
      }
      const stored = await this.reader.fetch(payload.id);
      if (stored && sameHash(stored.keyHash, payload.keyHash)) return 'created';
      await Job.fromId(this.queue, payload.id)
        .then((j) => j?.remove())
        .catch(() => undefined);
      return 'too_late';
    } catch (err) {
      throw E.serviceUnavailable(err);
    }
  }
}
