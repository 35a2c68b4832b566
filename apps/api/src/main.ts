import type { ConnectionOptions } from 'bullmq';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import { DevnetReader } from '@proofline/chain-devnet';
import { ClaimsService } from '@proofline/identity-claims';
import { IdentityService, registerBootstrapKey } from '@proofline/identity-feature';
import { ConfigError, loadConfig, systemClock } from '@proofline/shared-config';
import { RecordStore } from '@proofline/records-data-access';
import { BullPublishQueue, RecordsService } from '@proofline/records-feature';
import { bullPrefix } from '@proofline/shared-jobs';
import { createLogger } from '@proofline/shared-logger';
import { bullConnection, createRedis } from '@proofline/shared-redis';
import { createApp } from './app';
import type { ApiDeps } from './deps';
import { identityRecordsAuth } from './routes/records-http';
import { listen } from './server';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`proofline api: configuration error: ${e.message}\n`);
      process.exit(78);
    }
    throw e;
  }
  const logger = createLogger({ level: config.logLevel, name: 'api' });
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: 2, connectTimeout: 2000 });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  const clock = systemClock;
  const claims = new ClaimsService({ config, redis, clock });
  const identity = await IdentityService.open({ config, logger, redis, clock });
  if (config.bootstrapApiKey) {
    const boot = await registerBootstrapKey({ redis, config, clock }, config.bootstrapApiKey);
    logger.info({ keyId: boot.id, tenant: boot.tenant, created: boot.created }, 'bootstrap api key registered');
  }
  const publishQueue = new BullPublishQueue({ ...bullConnection(config.redisUrl), maxRetriesPerRequest: 2 } as ConnectionOptions, bullPrefix(config.redisPrefix));
  const recordsService = new RecordsService({
    config,
    clock,
    logger,
    store: new RecordStore(redis, config.redisPrefix),
    builder: new BsvTransactionBuilder(),
    reader: new DevnetReader(redis, config.redisPrefix),
    queue: publishQueue,
  });
  const records = { service: recordsService, auth: identityRecordsAuth(identity) };
  const deps: ApiDeps = { config, logger, redis, clock, claims, identity, records };
  const app = createApp(deps);
  const running = await listen(app, config.host, config.port, logger);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    await running.close(config.shutdownGraceMs);
    await identity.close();
    await publishQueue.close().catch(() => undefined);
    await redis.quit().catch(() => undefined);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`proofline api: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
