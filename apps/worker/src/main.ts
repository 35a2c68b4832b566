import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { loadConfigOrExit, systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { createRedis, startHeartbeat } from '@proofline/shared-redis';
import type { RunningRole, WorkerContext } from './context';
import { ROLES } from './roles';

async function main(): Promise<void> {
  const config = loadConfigOrExit('worker');
  const instanceId = `${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const logger = createLogger({ level: config.logLevel, name: 'worker' }).child({ instanceId });
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: null });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  const ctx: WorkerContext = { config, logger, redis, clock: systemClock, instanceId };

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
    await Promise.allSettled(running.map((r) => r.close()));
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
