import { UnrecoverableError, Worker } from 'bullmq';
import type { Job, WorkerOptions } from 'bullmq';
import { createKeyJob, keyRecord } from '@proofline/identity-domain';
import type { CreateKeyResult } from '@proofline/identity-domain';
import { KeyWriter } from '@proofline/identity-data-access';
import type { CreateOutcome } from '@proofline/identity-data-access';
import type { Config } from '@proofline/shared-config';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { Logger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';

export interface KeyWorkerOptions {
  readonly config: Config;
  readonly logger: Logger;
  /**
   * Opened and closed by the app: `redis` runs the create script, `bull` is the BullMQ worker's
   * connection (`maxRetriesPerRequest: null`; BullMQ duplicates it for the blocking reads).
   */
  readonly connections: {
    readonly redis: RedisClient;
    readonly bull: RedisClient;
  };
  /** Extra BullMQ worker options (tests shorten lockDuration / stalledInterval). */
  readonly worker?: Partial<
    Pick<WorkerOptions, 'lockDuration' | 'stalledInterval' | 'maxStalledCount' | 'concurrency'>
  >;
}

export interface RunningKeyWorker {
  readonly worker: Worker;
  /** Stops taking jobs and waits for the jobs in hand; leaves the connections open. */
  close(): Promise<void>;
}

/** What the API is told for each outcome of the create script. */
const JOB_OUTCOME: Readonly<Record<CreateOutcome, CreateKeyResult['outcome']>> = {
  created: 'created',
  exists: 'created',
  limit: 'limit_exceeded',
  late: 'too_late',
  conflict: 'conflict',
};

/**
 * Starts the key worker: it creates keys with one atomic Lua script that holds the per-tenant
 * limit, refuses jobs past their deadline and is idempotent by key id, so a job retried after a
 * crash (stalled-job recovery) never creates a duplicate or leaks a slot.
 */
export async function startIdentityKeyWorker(opts: KeyWorkerOptions): Promise<RunningKeyWorker> {
  const { config, connections } = opts;
  const log = opts.logger.child({ role: 'identity-keys' });
  const writer = new KeyWriter(connections.redis, config.redisPrefix);

  const processor = async (job: Job): Promise<CreateKeyResult> => {
    const parsed = createKeyJob.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError('invalid create-key job payload');
    const d = parsed.data;
    const record = keyRecord({
      id: d.id,
      tenant: d.tenant,
      name: d.name,
      permissions: d.permissions,
      createdBy: d.createdBy,
      createdAt: d.createdAt,
      expiresAt: d.expiresAt,
      secret: { keyHash: d.keyHash, last4: d.last4 },
    });
    const { outcome } = await writer.create(record, { limit: config.keyLimit, deadlineMs: d.deadlineMs });
    log.info({ keyId: d.id, tenant: d.tenant, outcome, attempt: job.attemptsMade + 1 }, 'create-key job done');
    return { outcome: JOB_OUTCOME[outcome] };
  };

  const worker = new Worker(QUEUES.identityKeys, processor, {
    connection: connections.bull,
    prefix: bullPrefix(config.redisPrefix, QUEUES.identityKeys),
    concurrency: config.workerConcurrency,
    ...opts.worker,
  });
  worker.on('error', (err) => log.warn({ err: err.message }, 'key worker error'));
  worker.on('failed', (job, err) => log.warn({ keyId: job?.id, err: err.message }, 'create-key job failed'));
  await worker.waitUntilReady();
  return { worker, close: () => worker.close() };
}
