import { startIdentityKeyWorker } from '@proofline/identity-feature';
import type { KeyWorkerOptions, RunningKeyWorker } from '@proofline/identity-feature';
import { createBullRedis, connectRedis } from '@proofline/shared-redis';
import { testRedisDeployment } from '@proofline/shared-testing';

/** The production key worker on its own test connections (closed with it). */
export async function startTestKeyWorker(
  opts: Pick<KeyWorkerOptions, 'config' | 'logger' | 'worker'>,
): Promise<RunningKeyWorker> {
  const deployment = testRedisDeployment(opts.config.redisUrl);
  const redis = connectRedis(deployment, { maxRetriesPerRequest: null });
  const bull = createBullRedis(deployment);
  for (const c of [redis, bull]) c.on('error', () => undefined);
  const running = await startIdentityKeyWorker({ ...opts, connections: { redis, bull } });
  return {
    worker: running.worker,
    close: async () => {
      await running.close();
      for (const c of [bull, redis]) await c.quit().catch(() => c.disconnect());
    },
  };
}
