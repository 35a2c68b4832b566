import { UnrecoverableError, Worker } from 'bullmq';
import type { ConnectionOptions, Job, WorkerOptions } from 'bullmq';
import { isPermission, sortPermissions } from '@proofline/identity-domain';
import type { ApiKeyRecord } from '@proofline/identity-domain';
import { KeyWriter } from '@proofline/identity-data-access';
import type { Config } from '@proofline/shared-config';
import { QUEUES, bullPrefix, createKeyJob } from '@proofline/shared-jobs';
import type { CreateKeyResult } from '@proofline/shared-jobs';
import type { Logger } from '@proofline/shared-logger';
import { bullConnection, createRedis } from '@proofline/shared-redis';

export interface KeyWorkerOptions {
  readonly config: Config;
  readonly logger: Logger;
  /** Extra BullMQ worker options (tests shorten lockDuration / stalledInterval). */
  readonly worker?: Partial<Pick<WorkerOptions, 'lockDuration' | 'stalledInterval' | 'maxStalledCount' | 'concurrency'>>;
}

export interface RunningKeyWorker {
  readonly worker: Worker;
  close(): Promise<void>;
}

/**
 * Starts the key worker: it creates keys with one atomic Lua script that holds the per-tenant
 * limit, refuses jobs past their deadline and is idempotent by key id, so a job retried after a
 * crash (stalled-job recovery) never creates a duplicate or leaks a slot.
 */
export async function startIdentityKeyWorker(opts: KeyWorkerOptions): Promise<RunningKeyWorker> {
  const { config } = opts;
  const log = opts.logger.child({ role: 'identity-keys' });
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: null });
  redis.on('error', (err) => log.warn({ err: err.message }, 'redis connection error'));
  const writer = new KeyWriter(redis, config.redisPrefix);

  const processor = async (job: Job): Promise<CreateKeyResult> => {
    const parsed = createKeyJob.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError('invalid create-key job payload');
    const d = parsed.data;
    const record: ApiKeyRecord = {
      id: d.id,
      tenant: d.tenant,
      name: d.name,
      keyHash: d.keyHash,
      last4: d.last4,
      permissions: sortPermissions(d.permissions.filter(isPermission)),
      createdBy: d.createdBy,
      createdAt: d.createdAt,
      updatedAt: d.createdAt,
      expiresAt: d.expiresAt,
      revokedAt: null,
      source: 'identity',
      legacyId: null,
    };
    if (record.permissions.length === 0) throw new UnrecoverableError('create-key job without a valid permission');
    const { outcome } = await writer.create(record, { limit: config.keyLimit, deadlineMs: d.deadlineMs });
    const result: CreateKeyResult['outcome'] =
      outcome === 'created' || outcome === 'exists' ? 'created' : outcome === 'limit' ? 'limit_exceeded' : outcome === 'late' ? 'too_late' : 'conflict';
    log.info({ keyId: d.id, tenant: d.tenant, outcome, attempt: job.attemptsMade + 1 }, 'create-key job done');
    return { outcome: result };
  };

  const worker = new Worker(QUEUES.identityKeys, processor, {
    connection: bullConnection(config.redisUrl) as ConnectionOptions,
    prefix: bullPrefix(config.redisPrefix),
    concurrency: config.workerConcurrency,
    ...opts.worker,
  });
  worker.on('error', (err) => log.warn({ err: err.message }, 'key worker error'));
  worker.on('failed', (job, err) => log.warn({ keyId: job?.id, err: err.message }, 'create-key job failed'));
  await worker.waitUntilReady();
  return {
    worker,
    close: async () => {
      await worker.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
