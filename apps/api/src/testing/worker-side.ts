// The worker side of the ARC route specs (not a spec itself), wired as apps/worker wires it.
import { createArcChain, startArcCallbackWorker } from '@proofline/chain-arc';
import type { ArcChain, RunningArcCallbackWorker } from '@proofline/chain-arc';
import type { FundingPool } from '@proofline/chain-wallet';
import { createPublication } from '@proofline/records-publication';
import type { Publication } from '@proofline/records-publication';
import type { Logger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import type { RunningApi } from './harness';

export interface WorkerSide {
  /** The chain scope on the worker's connection (ARC client, proof store, publisher). */
  readonly chain: ArcChain;
  readonly publication: Publication;
  /** Stops the callback worker, the publication's roles and the chain scope; the connections stay open. */
  close(): Promise<void>;
}

/**
 * The chain scope and the records publication on the worker's own connections (`redis` for
 * commands, `bull` for BullMQ), configured as the API under test is; ARC at `arcUrl` when given
 * (a proxy in front of the node). With `callbacks`, the worker's arc-callbacks role proves the
 * callbacks the API queues. Nothing is started but that: the spec starts the publisher and the
 * confirmations it needs.
 */
export async function startWorkerSide(o: {
  readonly prefix: string;
  readonly api: RunningApi;
  readonly pool: FundingPool;
  readonly redis: RedisClient;
  readonly bull: RedisClient;
  readonly logger: Logger;
  readonly arcUrl?: string;
  readonly callbacks?: boolean;
}): Promise<WorkerSide> {
  const config = o.api.deps.config;
  const chain = createArcChain({
    redis: o.redis,
    prefix: o.prefix,
    config: o.arcUrl ? { ...config.chain, arcUrl: o.arcUrl } : config.chain,
    seed: config.wallet.seed,
  });
  const publication = createPublication({
    redis: o.redis,
    bull: o.bull,
    prefix: o.prefix,
    config,
    chain,
    pool: o.pool,
    clock: o.api.deps.clock,
    logger: o.logger,
  });
  const callbacks: RunningArcCallbackWorker | null = o.callbacks
    ? await startArcCallbackWorker({
        connection: o.bull,
        redisPrefix: o.prefix,
        onProven: publication.seen,
        deps: {
          headers: chain.headers,
          store: chain.store,
          logger: o.logger,
          events: { redis: o.redis, prefix: o.prefix },
        },
      })
    : null;
  return {
    chain,
    publication,
    close: async () => {
      await callbacks?.close();
      await publication.close();
      await chain.close();
    },
  };
}
