import { createPubSub } from 'graphql-yoga';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import { DevnetReader, devnetKeys } from '@proofline/chain-devnet';
import type { BlockEvent } from '@proofline/chain-devnet';
import { IdentityService } from '@proofline/identity-feature';
import { RecordStore } from '@proofline/records-data-access';
import { RecordsService } from '@proofline/records-feature';
import type { PublishQueue } from '@proofline/records-feature';
import type { Clock, Config } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import { createRedis } from '@proofline/shared-redis';
import type { Redis } from '@proofline/shared-redis';

/** The chain reads the GraphQL facade needs (the devnet reader today, a network adapter later). */
export type ChainView = Pick<DevnetReader, 'tip' | 'blockByHash' | 'blockByHeight'>;

/** The identity use cases the GraphQL facade calls (same service as REST). */
export type IdentityUseCases = Pick<IdentityService, 'authenticate' | 'listKeys' | 'usage'>;

/** Where new blocks are announced: every instance hears every block (Redis pub/sub). */
export interface BlockEvents {
  subscribe(): AsyncIterableIterator<BlockEvent>;
}

/**
 * Everything the GraphQL app is composed from. `createGraphQLDeps` builds it for main.ts and the
 * tests; resolvers reach it through the context only.
 */
export interface GraphQLDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly records: RecordsService;
  readonly identity: IdentityUseCases;
  readonly chain: ChainView;
  readonly blockEvents: BlockEvents;
}

export interface OwnedGraphQLDeps extends GraphQLDeps {
  /** The request-path connection (finite retries: an outage becomes a fast error, not a hang). */
  readonly redis: Redis;
  /** Closes every connection the deps opened (bounded). */
  close(): Promise<void>;
}

/** The GraphQL app only reads: a write reaching this queue is a wiring bug. */
const readOnlyQueue: PublishQueue = {
  enqueue: () => Promise.reject(new Error('the GraphQL facade does not write records')),
};

/**
 * Builds the GraphQL app's services the way apps/api/src/main.ts builds REST's: one RecordsService
 * over the records store and the devnet reader, the IdentityService, and a Redis pub/sub event
 * target (own publish and subscribe connections) for block events.
 */
export async function createGraphQLDeps(config: Config, logger: Logger, clock: Clock): Promise<OwnedGraphQLDeps> {
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: 2, connectTimeout: 2000 });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  // Pub/sub connections retry forever: a subscription must survive a Redis restart.
  const subscribeClient = createRedis(config.redisUrl, { maxRetriesPerRequest: null });
  subscribeClient.on('error', (err) => logger.warn({ err: err.message }, 'redis subscriber error'));
  const identity = await IdentityService.open({ config, logger, redis, clock });
  const records = new RecordsService({
    config,
    clock,
    logger,
    store: new RecordStore(redis, config.redisPrefix),
    builder: new BsvTransactionBuilder(),
    reader: new DevnetReader(redis, config.redisPrefix),
    queue: readOnlyQueue,
  });
  const topic = devnetKeys(config.redisPrefix).blockEvents;
  const pubsub = createPubSub<Record<string, [BlockEvent]>>({
    eventTarget: createRedisEventTarget({ publishClient: redis, subscribeClient }),
  });
  return {
    config,
    logger,
    clock,
    redis,
    records,
    identity,
    chain: new DevnetReader(redis, config.redisPrefix),
    blockEvents: { subscribe: () => pubsub.subscribe(topic) },
    // Bounded: with Redis down a graceful QUIT would wait for a reconnection forever.
    close: async () => {
      subscribeClient.disconnect();
      await identity.close();
      await Promise.race([redis.quit().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
      redis.disconnect();
    },
  };
}
