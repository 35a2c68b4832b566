import { Queue } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import { DevnetReader } from '@proofline/chain-devnet';
import { ClaimsService } from '@proofline/identity-claims';
import { IdentityService, registerBootstrapKey } from '@proofline/identity-feature';
import { RecordStore } from '@proofline/records-data-access';
import { BullPublishQueue, RecordsService } from '@proofline/records-feature';
import type { Clock, Config } from '@proofline/shared-config';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { Logger } from '@proofline/shared-logger';
import { bullConnection, createRedis } from '@proofline/shared-redis';
import type { ApiDeps } from './deps';
import { createApiMetrics } from './metrics';
import { identityRecordsAuth } from './routes/records-http';

export interface ComposedApi {
  readonly deps: ApiDeps & Required<Pick<ApiDeps, 'identity' | 'records' | 'metrics'>>;
  /** Closes what `composeApi` opened (after the HTTP server has drained). */
  close(): Promise<void>;
}

/**
 * The production composition of the REST app: connections, the chain adapter, and every
 * feature's service. `main.ts` runs it with the process configuration; tests run the very same
 * wiring with a test configuration.
 */
export async function composeApi(config: Config, logger: Logger, clock: Clock): Promise<ComposedApi> {
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: 2, connectTimeout: 2000 });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  const claims = new ClaimsService({ config, redis, clock });
  const identity = await IdentityService.open({ config, logger, redis, clock });
  if (config.bootstrapApiKey) {
    const boot = await registerBootstrapKey({ redis, config, clock }, config.bootstrapApiKey);
    logger.info({ keyId: boot.id, tenant: boot.tenant, created: boot.created }, 'bootstrap api key registered');
  }
  const publishQueue = new BullPublishQueue({ ...bullConnection(config.redisUrl), maxRetriesPerRequest: 2 } as ConnectionOptions, bullPrefix(config.redisPrefix));
  const store = new RecordStore(redis, config.redisPrefix);
  const reader = new DevnetReader(redis, config.redisPrefix);
  const service = new RecordsService({ config, clock, logger, store, builder: new BsvTransactionBuilder(), reader, queue: publishQueue });
  const records = { service, auth: identityRecordsAuth(identity) };
  // Read-only queue handles for /metrics (job counts); they never add jobs.
  const observed = Object.values(QUEUES).map(
    (name) => new Queue(name, { connection: { ...bullConnection(config.redisUrl), maxRetriesPerRequest: 2 } as ConnectionOptions, prefix: bullPrefix(config.redisPrefix) }),
  );
  for (const q of observed) q.on('error', (err) => logger.warn({ err: err.message, queue: q.name }, 'metrics queue error'));
  const metrics = createApiMetrics({
    queueCounts: async () => Object.fromEntries(await Promise.all(observed.map(async (q) => [q.name, await q.getJobCounts('waiting', 'active', 'delayed', 'failed')] as const))),
    pendingPublications: () => store.outboxSize(),
    tipHeight: () => reader.tipHeight(),
  });
  return {
    deps: { config, logger, redis, clock, claims, identity, records, metrics },
    close: async () => {
      await identity.close();
      await Promise.all(observed.map((q) => q.close().catch(() => undefined)));
      await publishQueue.close().catch(() => undefined);
      await redis.quit().catch(() => undefined);
    },
  };
}
