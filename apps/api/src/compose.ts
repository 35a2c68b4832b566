import type { ConnectionOptions } from 'bullmq';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import { DevnetReader } from '@proofline/chain-devnet';
import { ClaimsService } from '@proofline/identity-claims';
import { IdentityService, registerBootstrapKey } from '@proofline/identity-feature';
import { RecordStore } from '@proofline/records-data-access';
import { BullPublishQueue, RecordsService } from '@proofline/records-feature';
import type { Clock, Config } from '@proofline/shared-config';
import { bullPrefix } from '@proofline/shared-jobs';
import type { Logger } from '@proofline/shared-logger';
import { bullConnection, createRedis } from '@proofline/shared-redis';
import type { ApiDeps } from './deps';
import { identityRecordsAuth } from './routes/records-http';

export interface ComposedApi {
  readonly deps: ApiDeps & Required<Pick<ApiDeps, 'identity' | 'records'>>;
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
  const service = new RecordsService({
    config,
    clock,
    logger,
    store: new RecordStore(redis, config.redisPrefix),
    builder: new BsvTransactionBuilder(),
    reader: new DevnetReader(redis, config.redisPrefix),
    queue: publishQueue,
  });
  const records = { service, auth: identityRecordsAuth(identity) };
  return {
    deps: { config, logger, redis, clock, claims, identity, records },
    close: async () => {
      await identity.close();
      await publishQueue.close().catch(() => undefined);
      await redis.quit().catch(() => undefined);
    },
  };
}
