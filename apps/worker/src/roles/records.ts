import { inputsReleasable } from '@proofline/chain-wallet';
import { publicationSettlement, startRecordsPublisher } from '@proofline/records-feature';
import { WebhookStore } from '@proofline/webhooks-data-access';
import { watchPublications } from '@proofline/webhooks-feature';
import type { RoleStarter } from '../context';

/**
 * The records publisher: submits accepted record transactions to ARC (concurrent jobs of this
 * process coalesced into `POST /v1/txs`), settles their funding and watches them for a proof;
 * plus the outbox sweeper.
 */
export const recordsPublishRole: RoleStarter = async (ctx) => {
  const running = startRecordsPublisher({
    connection: ctx.bull,
    redis: ctx.redis,
    prefix: ctx.config.redisPrefix,
    // Records of tenants with webhooks enter the watch set before submission (libs/webhooks).
    chain: watchPublications(ctx.chain.publisher, {
      store: new WebhookStore(ctx.redis, ctx.config.redisPrefix),
      prefix: ctx.config.redisPrefix,
      clock: ctx.clock,
    }),
    settlement: publicationSettlement({
      pool: ctx.wallet.pool,
      proofs: ctx.chain.store,
      clock: ctx.clock,
      // A refused tx that never reached the network may give its inputs back (release rules).
      releasable: (code) => inputsReleasable({ code, reachedNetwork: false }),
    }),
    clock: ctx.clock,
    logger: ctx.logger.child({ role: 'records-publish' }),
    concurrency: ctx.config.workerConcurrency,
  });
  return { name: 'records-publish', close: () => running.close() };
};
