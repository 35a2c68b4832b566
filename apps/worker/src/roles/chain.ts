import { confirmationOptions, startConfirmationWorker } from '@proofline/chain-arc';
import { RecordStore } from '@proofline/records-data-access';
import { rawTxOf, refusedWhileConfirming } from '@proofline/records-feature';
import type { RoleStarter } from '../context';

/**
 * ARC confirmations: a BullMQ job scheduler every ARC_POLL_MS (one run at a time across workers)
 * polls the published but unproven transactions, stores their proofs once verified against
 * HEADERS_URL, re-broadcasts the same bytes when ARC does not know a transaction, fails records
 * ARC refused, and handles reorgs. The node mines; no worker produces blocks.
 */
export const chainConfirmationsRole: RoleStarter = async (ctx) => {
  const records = new RecordStore(ctx.redis, ctx.config.redisPrefix);
  const logger = ctx.logger.child({ role: 'chain-confirmations' });
  const running = await startConfirmationWorker({
    connection: ctx.bull,
    redis: ctx.redis,
    redisPrefix: ctx.config.redisPrefix,
    pollMs: ctx.config.chain.pollMs,
    pass: {
      client: ctx.chain.client,
      rebroadcast: (txs) => ctx.chain.arc.submitMany(txs),
      headers: ctx.chain.headers,
      store: ctx.chain.store,
      redis: ctx.redis,
      prefix: ctx.config.redisPrefix,
      rawTxOf: rawTxOf(records),
      onRefused: refusedWhileConfirming({ records, pool: ctx.wallet.pool, clock: ctx.clock }),
      logger,
    },
    options: confirmationOptions(ctx.config.chain),
    logger,
  });
  return { name: 'chain-confirmations', close: () => running.close() };
};
