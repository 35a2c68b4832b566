import type { ConnectionOptions } from 'bullmq';
import { startIdentityKeyWorker } from '@proofline/identity-feature';
import type { KeyWorkerOptions, RunningKeyWorker } from '@proofline/identity-feature';
import { bullConnection, createRedis } from '@proofline/shared-redis';

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
