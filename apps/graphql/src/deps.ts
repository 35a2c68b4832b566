import type { BlockReader } from '@proofline/chain-domain';
import { createArcChain } from '@proofline/chain-arc';
import { openIdentity } from '@proofline/identity-feature';
import type { Identity } from '@proofline/identity-feature';
import { createRecordReads, createRecordReceipts } from '@proofline/records-feature';
import type { RecordReads, RecordReceipts } from '@proofline/records-feature';
import type { Clock, Config } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import {
  connectRedis,
  redisTargetOf,
  requestPathOptions,
  resolveRedis,
  throttledErrorLog,
  withResolvedPartitions,
} from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';

/** The identity use cases the GraphQL facade calls (same service as REST). */
export type IdentityUseCases = Pick<Identity, 'authenticator' | 'keys'>;

/**
 * Everything the GraphQL app is composed from. `createGraphQLDeps` builds it for main.ts and the
 * tests; resolvers reach it through the context only. GraphQL only reads: records reads, the
 * chain's block port, identity's authentication and key listing.
 */
export interface GraphQLDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly records: RecordReads;
  /** Receipts of confirmed records (the `receipt` field of records). */
  readonly receipts: RecordReceipts;
  readonly identity: IdentityUseCases;
  /** Blocks, headers and block events of whichever chain serves the deployment. */
  readonly chain: BlockReader;
}

export interface OwnedGraphQLDeps extends GraphQLDeps {
  /** The request-path connection (finite retries: an outage becomes a fast error, not a hang). */
  readonly redis: RedisClient;
  /** Closes the services, then every connection the deps opened (bounded). */
  close(): Promise<void>;
}

/**
 * The GraphQL app's composition root: opens its connections (commands; a subscriber shared by
 * block events and key invalidations; redis-om's node-redis client) and builds the identity scope,
 * the records read scope and the chain scope on them. One attempt: it asks REDIS_URL whether it is
 * one server or a cluster node, and rejects, having closed what it opened, when Redis does not
 * answer (main.ts retries while the process listens not-ready).
 */
export async function createGraphQLDeps(configured: Config, logger: Logger, clock: Clock): Promise<OwnedGraphQLDeps> {
  const deployment = await resolveRedis(redisTargetOf(configured));
  const undo: (() => Promise<unknown> | void)[] = [];
  try {
    // Bounded (requestPathOptions): a Redis outage is REDIS_UNAVAILABLE within about a second, never a hang.
    const redis = connectRedis(deployment, requestPathOptions({ commandTimeout: configured.redisCommandTimeoutMs }));
    redis.on(
      'error',
      throttledErrorLog((f, m) => logger.warn(f, m), 'redis connection error'),
    );
    undo.push(() => redis.disconnect());
    // REDIS_PARTITIONS unset: the count this Redis implies (every process resolves the same).
    const config = await withResolvedPartitions(redis, configured);
    // Identity: the one place the GraphQL app creates the identity scope. Its subscriber (key
    // invalidations, and block events below) retries forever; redis-om calls are bounded.
    const identity = await openIdentity(deployment, { config, logger, clock, redis });
    undo.push(() => identity.close());
    const { subscriber } = identity;
    // Reads only: proofs and blocks as the service verified them (the workers' confirmation role stores them).
    const chain = createArcChain({
      redis,
      subscriber,
      prefix: config.redisPrefix,
      config: config.chain,
      seed: config.wallet.seed,
    });
    const blocks = chain.blocks;
    const scope = {
      config,
      redis,
      prefix: config.redisPrefix,
      reader: chain.reader,
      partitions: config.redisPartitions,
    };
    const records = createRecordReads(scope);
    const receipts = createRecordReceipts(scope);
    return {
      config,
      logger,
      clock,
      redis,
      records,
      receipts,
      identity,
      chain: blocks,
      // Services first, then connections; bounded: with Redis down a graceful QUIT would wait for a reconnection forever.
      close: async () => {
        await chain.close();
        await identity.close();
        await Promise.race([redis.quit().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
        redis.disconnect();
      },
    };
  } catch (err) {
    for (const step of undo.reverse()) await Promise.resolve(step()).catch(() => undefined);
    throw err;
  }
}
