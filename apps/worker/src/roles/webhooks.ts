import { createWebhooks, startWebhookDelivery, startWebhookWatcher } from '@proofline/webhooks-feature';
import type { RoleStarter } from '../context';

/**
 * Webhooks: the watcher (one pass per second across all workers: watched records that are
 * confirmed or failed become delivery jobs) and the delivery worker (signed POSTs with retries).
 * Records enter the watch set in the publisher (createPublication's `webhooks`, wired in main.ts).
 */
export const webhooksRole: RoleStarter = async (ctx) => {
  const prefix = ctx.config.redisPrefix;
  const logger = ctx.logger.child({ role: 'webhooks' });
  const webhooks = createWebhooks({ config: ctx.config, redis: ctx.redis, prefix, clock: ctx.clock });
  const watcher = await startWebhookWatcher({
    connection: ctx.bull,
    redis: ctx.redis,
    prefix,
    webhooks: webhooks.store,
    records: ctx.publication.store,
    reader: ctx.chain.reader,
    clock: ctx.clock,
    logger,
  });
  const delivery = startWebhookDelivery({
    connection: ctx.bull,
    prefix,
    store: webhooks.store,
    box: webhooks.box,
    clock: ctx.clock,
    allowPrivate: ctx.config.webhooks.allowPrivate,
    concurrency: ctx.config.workerConcurrency,
    logger,
  });
  return {
    name: 'webhooks',
    close: async () => {
      await Promise.all([watcher.close(), delivery.close()]);
    },
  };
};
