import type { ConnectionOptions } from 'bullmq';
import { closeOmConnection, openOmConnection } from '@proofline/identity-data-access';
import { createIdentity, startIdentityKeyWorker } from '@proofline/identity-feature';
import type { Identity, KeyWorkerOptions, RunningKeyWorker } from '@proofline/identity-feature';
import type { Clock, Config } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import { bullConnection, createRedis } from '@proofline/shared-redis';
import type { Redis } from '@proofline/shared-redis';

/** Resolves once `conn` is ready (connections are opened eagerly; this only waits). */
async function ready(conn: Redis): Promise<void> {
  if (conn.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    conn.once('ready', () => resolve());
    conn.once('end', () => reject(new Error('redis connection ended before it was ready')));
  });
}

export interface TestIdentity {
  readonly identity: Identity;
  /** Closes the identity parts, then the connections opened here (not `redis`). */
  close(): Promise<void>;
}

/**
 * The production identity factory on the test Redis, composed the way an app composes it: this
 * opens the subscriber and the redis-om connection (the command connection `redis` is the
 * caller's), waits until the invalidation subscription is live, and closes them in order.
 */
export async function startTestIdentity(opts: {
  config: Config;
  logger: Logger;
  clock: Clock;
  redis: Redis;
}): Promise<TestIdentity> {
  const { config } = opts;
  const subscriber = createRedis(config.redisUrl, { maxRetriesPerRequest: null });
  subscriber.on('error', () => undefined);
  const om = await openOmConnection(config.redisUrl, () => undefined);
  await ready(subscriber);
  const identity = await createIdentity({
    config,
    logger: opts.logger,
    clock: opts.clock,
    connections: { redis: opts.redis, om, subscriber, bull: bullConnection(config.redisUrl) as ConnectionOptions },
  });
  return {
    identity,
    close: async () => {
      await identity.close();
      await closeOmConnection(om);
      await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
}

/** The production key worker on its own test connection (closed with it). */
export async function startTestKeyWorker(
  opts: Pick<KeyWorkerOptions, 'config' | 'logger' | 'worker'>,
): Promise<RunningKeyWorker> {
  const redis = createRedis(opts.config.redisUrl, { maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  const running = await startIdentityKeyWorker({
    ...opts,
    connections: { redis, bull: bullConnection(opts.config.redisUrl) as ConnectionOptions },
  });
  return {
    worker: running.worker,
    close: async () => {
      await running.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
