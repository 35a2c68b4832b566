import type { ConnectionOptions } from 'bullmq';
import { DevnetPublisher } from '@proofline/chain-devnet';
import { RecordStore } from '@proofline/records-data-access';
import { startRecordsPublisher } from '@proofline/records-feature';
import { bullPrefix } from '@proofline/shared-jobs';
import { bullConnection } from '@proofline/shared-redis';
import type { RoleStarter } from '../context';

/** The records publisher: submits accepted record transactions to the chain, plus the outbox sweeper. */
export const recordsPublishRole: RoleStarter = async (ctx) => {
  const running = startRecordsPublisher({
    connection: bullConnection(ctx.config.redisUrl) as ConnectionOptions,
    bullPrefix: bullPrefix(ctx.config.redisPrefix),
    store: new RecordStore(ctx.redis, ctx.config.redisPrefix),
    chain: new DevnetPublisher(ctx.redis, ctx.config.redisPrefix),
    clock: ctx.clock,
    logger: ctx.logger.child({ role: 'records-publish' }),
    concurrency: ctx.config.workerConcurrency,
  });
  return { name: 'records-publish', close: () => running.close() };
};
