import { DevnetBlockProducer, startBlockProducerWorker } from '@proofline/chain-devnet';
import type { RoleStarter } from '../context';

/** The embedded devnet's block producer (one block per BLOCK_INTERVAL_MS across all workers). */
export const chainBlocksRole: RoleStarter = async (ctx) => {
  const running = await startBlockProducerWorker({
    redisUrl: ctx.config.redisUrl,
    redisPrefix: ctx.config.redisPrefix,
    blockIntervalMs: ctx.config.blockIntervalMs,
    producer: new DevnetBlockProducer(ctx.redis, ctx.config.redisPrefix),
    clock: ctx.clock,
    logger: ctx.logger.child({ role: 'chain-blocks' }),
  });
  return { name: 'chain-blocks', close: () => running.close() };
};
