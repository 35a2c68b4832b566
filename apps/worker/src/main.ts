import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { followLauncher, loadConfigOrExit, systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { createArcChain } from '@proofline/chain-arc';
import { createFundingWallet, refuseUnpartitionedPool } from '@proofline/chain-wallet';
import { createPublication } from '@proofline/records-publication';
import { WebhookStore } from '@proofline/webhooks-data-access';
import { watchPublications } from '@proofline/webhooks-feature';
import { serveMetrics } from '@proofline/shared-http';
import type { MetricsListener } from '@proofline/shared-http';
import {
  coalesceWrites,
  connectRedis,
  createBullRedis,
  redisTargetOf,
  joinPartitionLayouts,
  refuseOnePartitionOverLayouts,
  requestPathOptions,
  startHeartbeat,
  waitForRedis,
  withResolvedPartitions,
} from '@proofline/shared-redis';
import type { RunningRole, WorkerContext } from './context';
import { createWorkerMetrics } from './metrics';
import { ROLES } from './roles';

async function main(): Promise<void> {
  const configured = loadConfigOrExit('worker');
  followLauncher();
  const instanceId = `${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const logger = createLogger({ level: configured.logLevel, name: 'worker' }).child({ instanceId });
  // One server or a cluster: REDIS_URL is asked once (waiting while Redis does not answer).
  const deployment = await waitForRedis(redisTargetOf(configured), (err, attempt) => {
    if (attempt === 1 || attempt % 40 === 0)
      logger.warn({ err: err.message, attempt }, 'Redis does not answer; retrying before starting');
  });
  // A batch's commands, issued together, leave in one socket write (coalesceWrites).
  const redis = coalesceWrites(connectRedis(deployment, { maxRetriesPerRequest: null }));
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  const bull = coalesceWrites(createBullRedis(deployment));
  bull.on('error', (err) => logger.warn({ err: err.message }, 'bullmq connection error'));
  // REDIS_PARTITIONS unset: the count this Redis implies (every process resolves the same).
  const config = await withResolvedPartitions(redis, configured);
  logger.info(
    { partitions: config.redisPartitions, configured: configured.redisPartitions !== undefined },
    'records partitions',
  );
  const chain = createArcChain({ redis, prefix: config.redisPrefix, config: config.chain, seed: config.wallet.seed });
  const wallet = createFundingWallet(redis, config);
  // Never beside a pool of another partition layout: its records and funding would be invisible.
  await refuseUnpartitionedPool(redis, config.redisPrefix, config.redisPartitions);
  await refuseOnePartitionOverLayouts(redis, config.redisPrefix, config.redisPartitions);
  // Every live partition (other layouts' too) is swept, settled and funded (docs/redis-cluster.md,
  // "Growing the partition count"); known before the roles start.
  const layouts = joinPartitionLayouts(
    redis,
    config.redisPrefix,
    config.redisPartitions,
    wallet.pool.partitions.layouts,
    {
      onError: (err) => logger.warn({ err: err.message }, 'partition layout registry unavailable; retrying'),
    },
  );
  await layouts.ready;
  const prefix = config.redisPrefix;
  const publication = createPublication({
    redis,
    bull,
    prefix,
    config,
    chain,
    pool: wallet.pool,
    clock: systemClock,
    logger,
    // Records of tenants with webhooks enter the watch set before submission (libs/webhooks).
    webhooks: (publisher) =>
      watchPublications(publisher, { store: new WebhookStore(redis, prefix), prefix, clock: systemClock }),
  });
  const ctx: WorkerContext = {
    config,
    logger,
    redis,
    bull,
    chain,
    wallet,
    publication,
    clock: systemClock,
    instanceId,
  };

  // Metrics first, so the roles' BullMQ workers are observed from their first job (metrics.ts).
  // Job counts are read at scrape time on a bounded connection of their own: a scrape while Redis
  // is away answers 503 within about a second instead of waiting on the workers' connection
  // (which retries forever, as BullMQ workers require).
  const metricsRedis = connectRedis(deployment, requestPathOptions({ commandTimeout: config.redisCommandTimeoutMs }));
  metricsRedis.on('error', () => undefined);
  const metrics = createWorkerMetrics({ bull: metricsRedis, redisPrefix: config.redisPrefix });
  let metricsListener: MetricsListener | undefined;
  if (config.metrics.workerPort !== undefined)
    metricsListener = await serveMetrics(metrics.registry, config.metrics.host, config.metrics.workerPort, logger);

  const running: RunningRole[] = [];
  for (const start of ROLES) running.push(await start(ctx));
  const stopHeartbeat = startHeartbeat(redis, config.redisPrefix, instanceId);
  logger.info({ roles: running.map((r) => r.name) }, 'worker started');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing jobs in hand');
    const force = setTimeout(() => {
      logger.warn('grace period over; exiting with jobs in hand (they will be retried)');
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    await stopHeartbeat();
    layouts.stop();
    // Workers (and their queues) first, then the chain scope, then the connections.
    await Promise.allSettled(running.map((r) => r.close()));
    await publication.close().catch(() => undefined);
    await metricsListener?.close();
    await metrics.close();
    metricsRedis.disconnect();
    await chain.close();
    await bull.quit().catch(() => undefined);
    await redis.quit().catch(() => undefined);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`proofline worker: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
