import { createArcChain, startArcCallbackWorker } from '@proofline/chain-arc';
import type { ArcChain, RunningArcCallbackWorker } from '@proofline/chain-arc';
import type { FundingPool } from '@proofline/chain-wallet';
import { createRecords } from '@proofline/records-feature';
import type { PublishQueue, Records } from '@proofline/records-feature';
import { createPublication } from '@proofline/records-publication';
import type { Publication, PublicationOptions } from '@proofline/records-publication';
import { systemClock } from '@proofline/shared-config';
import type { Clock, Config } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import type { Logger } from '@proofline/shared-logger';
import { connectRedis, createBullRedis } from '@proofline/shared-redis';
import type { RedisClient, RedisDeployment } from '@proofline/shared-redis';
import { testRedisDeployment } from '@proofline/shared-testing';

export interface PublicationSideOptions {
  /** The test's (or benchmark's) Redis prefix. */
  readonly prefix: string;
  /** The chain settings, WORKER_CONCURRENCY, the fee floor … (and REDIS_URL, see `deployment`). */
  readonly config: Config;
  /**
   * Where this side's two connections go. Default: the test Redis at `config.redisUrl`, a server
   * or a cluster as jest's global setup started it (a benchmark names its own).
   */
  readonly deployment?: RedisDeployment;
  /** The funding wallet's pool (a devnet's `dev.pool`): writes reserve from it, publication settles it. */
  readonly pool: FundingPool;
  /** Default: the system clock. */
  readonly clock?: Clock;
  /** Default: silent. */
  readonly logger?: Logger;
  /**
   * A chain scope to publish with (the devnet's `dev.chain`): not closed here. Default: a chain
   * scope of this side's own, on its command connection, from `config.chain` and the wallet seed.
   */
  readonly chain?: ArcChain;
  /** The ARC of this side's own chain scope instead of `config.chain.arcUrl` (an ARC proxy in front of the node). */
  readonly arcUrl?: string;
  /** The webhooks watch step, given this side's command connection (apps/worker wires `watchPublications`). */
  readonly webhooks?: (redis: RedisClient) => PublicationOptions['webhooks'];
}

/**
 * One side of the service's publication, composed as the apps compose it, on connections of its
 * own: the worker's (`publication.startPublisher()`, `publication.startConfirmations()`), or a
 * writer's (`records()`: the write and read use cases enqueuing on the publication's producer,
 * as apps/api runs them). Nothing starts until asked.
 */
export interface PublicationSide {
  /** This side's command connection (`maxRetriesPerRequest: null`, as the worker's). */
  readonly redis: RedisClient;
  /** This side's BullMQ connection. */
  readonly bull: RedisClient;
  readonly chain: ArcChain;
  readonly publication: Publication;
  /**
   * The records scope (`createRecords`) over this side's chain scope and the pool, at the fee
   * floor, enqueuing on `queue` (default: the publication's producer).
   */
  records(queue?: PublishQueue): Records;
  /**
   * Starts the worker's arc-callbacks role (once): the callbacks the API queues are verified and
   * their proofs stored, and what they prove is settled as a poll's would be (`publication.seen`).
   */
  startCallbacks(): Promise<RunningArcCallbackWorker>;
  /**
   * Closes the callbacks role and the publication (workers first), this side's own chain scope,
   * then its connections. Deletes no key.
   */
  close(): Promise<void>;
}

/** `createArcChain` + `createPublication` (+ `createRecords` on demand) on two new connections (the apps' factory). */
export function composePublicationSide(o: PublicationSideOptions): PublicationSide {
  const { prefix, config, pool } = o;
  const clock = o.clock ?? systemClock;
  const logger = o.logger ?? createLogger({ level: 'silent', name: 'test' });
  const deployment = o.deployment ?? testRedisDeployment(config.redisUrl);
  const redis = connectRedis(deployment, { maxRetriesPerRequest: null });
  const bull = createBullRedis(deployment);
  const chainConfig = o.arcUrl === undefined ? config.chain : { ...config.chain, arcUrl: o.arcUrl };
  const chain = o.chain ?? createArcChain({ redis, prefix, config: chainConfig, seed: config.wallet.seed });
  const publication = createPublication({
    redis,
    bull,
    prefix,
    config,
    chain,
    pool,
    clock,
    logger,
    ...(o.webhooks ? { webhooks: o.webhooks(redis) } : {}),
  });
  let callbacks: Promise<RunningArcCallbackWorker> | undefined;
  return {
    redis,
    bull,
    chain,
    publication,
    startCallbacks() {
      callbacks ??= startArcCallbackWorker({
        connection: bull,
        redisPrefix: prefix,
        onProven: publication.seen,
        deps: { headers: chain.headers, store: chain.store, logger, events: { redis, prefix } },
      });
      return callbacks;
    },
    records: (queue = publication.queue) =>
      createRecords({
        config,
        clock,
        logger,
        redis,
        prefix,
        builder: chain.builder,
        funding: { pool, feeRate: () => config.wallet.feeFloorSatsPerKb },
        reader: chain.reader,
        queue,
      }),
    async close() {
      await (await callbacks?.catch(() => undefined))?.close();
      await publication.close();
      if (!o.chain) await chain.close();
      await bull.quit();
      await redis.quit();
    },
  };
}
