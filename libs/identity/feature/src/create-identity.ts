import { Queue, QueueEvents } from 'bullmq';
import type { RedisConnection } from 'redis-om';
import { KeyReader, KeyWriter } from '@proofline/identity-data-access';
import type { Clock, Config } from '@proofline/shared-config';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { Logger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import type { Admission } from './admission';
import { Authenticator } from './authenticator';
import { KeyCommands } from './key-commands';
import { CreateKeyJobs } from './key-job-client';
import { LegacyKeys } from './legacy-keys';

/** The connections the identity scope runs on. The app opens them and closes them; the factory never does. */
export interface IdentityConnections {
  /** Request-path ioredis command connection (finite retries); also carries the key queue's commands. */
  readonly redis: RedisClient;
  /** node-redis v4 client redis-om reads through (see `openOmConnection`). */
  readonly om: RedisConnection;
  /** ioredis connection in subscriber mode for key invalidations; may carry other channels too. */
  readonly subscriber: RedisClient;
  /**
   * What the key queue's event reader (a blocking XREAD) is duplicated from: BullMQ makes its own
   * copy of this connection (one server or a cluster, `maxRetriesPerRequest: null`), owned and
   * closed by the QueueEvents; this one is not used itself (the subscriber serves).
   */
  readonly bull: RedisClient;
}

export interface IdentityOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly connections: IdentityConnections;
  /** Checked by `requireKey` for every authenticated request (rate limits); absent = none. */
  readonly admission?: Admission;
}

/** The identity scope's parts: REST and GraphQL call the same ones. */
export interface Identity {
  /** `x-api-key` -> principal, with the per-process key cache and its invalidation. */
  readonly authenticator: Authenticator;
  /** Create / list / usage / revoke / delete, scoped to the caller's tenant. */
  readonly keys: KeyCommands;
  /** The legacy key endpoints mapped onto the key commands. */
  readonly legacy: LegacyKeys;
  /** Closes what the factory created (the key queue, its events, the invalidation listener); not the connections. Bounded. */
  close(): Promise<void>;
}

/**
 * The one factory of the identity scope, used by every composition root (API, GraphQL) and every
 * test fixture alike.
 */
export async function createIdentity(opts: IdentityOptions): Promise<Identity> {
  const { config, clock, connections } = opts;
  const log = opts.logger.child({ component: 'identity' });
  const reader = new KeyReader(connections.redis, connections.om, config.redisPrefix);
  const writer = new KeyWriter(connections.redis, config.redisPrefix);
  const prefix = bullPrefix(config.redisPrefix, QUEUES.identityKeys);
  const queue = new Queue(QUEUES.identityKeys, { connection: connections.redis, prefix });
  queue.on('error', (err) => log.warn({ err: err.message }, 'identity queue error'));
  const queueEvents = new QueueEvents(QUEUES.identityKeys, { connection: connections.bull, prefix });
  queueEvents.on('error', (err) => log.warn({ err: err.message }, 'identity queue events error'));

  const authenticator = new Authenticator(reader, clock, opts.admission);
  const jobs = new CreateKeyJobs(queue, queueEvents, reader, writer, config.keyCreateTimeoutMs, log);
  const keys = new KeyCommands({ config, clock, logger: log, reader, writer, jobs });
  const legacy = new LegacyKeys(keys);
  const [detach] = await Promise.all([
    authenticator.listen(connections.subscriber, writer.keys.invalidationChannel, log),
    queueEvents.waitUntilReady(),
    queue.waitUntilReady(),
  ]);

  let closing: Promise<void> | undefined;
  const close = async () => {
    // Bounded: with Redis down a graceful close could wait forever; shutdown must not.
    for (const step of [detach, () => queueEvents.close(), () => queue.close()]) await bounded(step);
  };
  return { authenticator, keys, legacy, close: () => (closing ??= close()) };
}

async function bounded(step: () => Promise<unknown>, ms = 2000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([step().catch(() => undefined), limit]);
  clearTimeout(timer);
}
