import { startArcCallbackWorker } from '@proofline/chain-arc';
import type { RoleStarter } from '../context';

/**
 * ARC callbacks the API queued (QUEUES.arcCallbacks): every MINED item is verified against
 * HEADERS_URL and its proof stored, its funding settled (`Publication.seen`), the tip moved up
 * and a block event published; items whose
 * block the headers source could not give are retried with back-off. Runs only when callbacks are
 * configured (ARC_CALLBACK_URL and ARC_CALLBACK_TOKEN), as the API's route is mounted only then.
 */
export const arcCallbacksRole: RoleStarter = async (ctx) => {
  const { arcCallbackUrl, arcCallbackToken } = ctx.config.chain;
  if (!arcCallbackUrl || !arcCallbackToken) return { name: 'arc-callbacks (off)', close: async () => undefined };
  const logger = ctx.logger.child({ role: 'arc-callbacks' });
  const running = await startArcCallbackWorker({
    connection: ctx.bull,
    redisPrefix: ctx.config.redisPrefix,
    deps: {
      headers: ctx.chain.headers,
      store: ctx.chain.store,
      logger,
      events: { redis: ctx.redis, prefix: ctx.config.redisPrefix },
    },
    // A proven transaction's funding is settled at once (change freed, a refused record revived).
    onProven: ctx.publication.seen,
    concurrency: ctx.config.workerConcurrency,
    logger,
  });
  return { name: 'arc-callbacks', close: () => running.close() };
};
