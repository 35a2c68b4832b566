import { createWalletServices, startWalletUpkeepWorker } from '@proofline/chain-wallet';
import type { RoleStarter } from '../context';

/**
 * The funding wallet's upkeep: a BullMQ job scheduler every 30 s (one run per tick across all
 * workers) plus on-demand runs when a write found the pool empty (503 FUNDING_EXHAUSTED). Each run
 * returns expired leases, imports matured devnet coinbases and splits large UTXOs to keep
 * `POOL_LOW_WATER`, at the fee rate of ARC's current policy.
 */
export const walletRole: RoleStarter = async (ctx) => {
  const services = createWalletServices(ctx.redis, ctx.config, ctx.clock);
  const running = await startWalletUpkeepWorker({
    connection: ctx.bull,
    redisPrefix: ctx.config.redisPrefix,
    deps: () => services.upkeepDeps(),
    lowWater: services.lowWater,
    logger: ctx.logger.child({ role: 'wallet' }),
  });
  return { name: 'wallet', close: () => running.close() };
};
