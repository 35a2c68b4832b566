import { Queue } from 'bullmq';
import { ArcClient, arcCallbackQueue, createArcChain, inclusionsKeyOf } from '@proofline/chain-arc';
import type { ArcChain } from '@proofline/chain-arc';
import {
  FeeRateCache,
  WalletUpkeepRequester,
  arcFeePolicy,
  createFundingWallet,
  walletKeys,
} from '@proofline/chain-wallet';
import { refuseUnpartitionedPool } from '@proofline/chain-wallet';
import type { FundingWallet } from '@proofline/chain-wallet';
import { ClaimsService } from '@proofline/identity-claims';
import { openIdentity, registerBootstrapKey } from '@proofline/identity-feature';
import { createRecords } from '@proofline/records-feature';
import type { Records } from '@proofline/records-feature';
import { createPublication } from '@proofline/records-publication';
import type { BullPublishQueue, Publication } from '@proofline/records-publication';
import type { Clock, Config, ResolvedConfig } from '@proofline/shared-config';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { Logger } from '@proofline/shared-logger';
import {
  coalesceWrites,
  connectRedis,
  createBullRedis,
  joinPartitionLayouts,
  redisTargetOf,
  refuseOnePartitionOverLayouts,
  requestPathOptions,
  resolveRedis,
  throttledErrorLog,
} from '@proofline/shared-redis';
import { withResolvedPartitions } from '@proofline/shared-redis';
import type { PartitionLayoutsWatch, RedisClient, RedisDeployment } from '@proofline/shared-redis';
import { createWebhooks } from '@proofline/webhooks-feature';
import type { ApiDeps } from './deps';
import { IdempotencyStore } from './idempotency';
import { RateLimiter } from './rate-limit';
import { createApiMetrics } from './metrics';
import { identityRecordsAuth } from './routes/records';

/** The Redis connections of the REST app: opened here, closed last by `ComposedApi.close`. */
export interface ApiConnections {
  /** The service's Redis, one server or a cluster (`resolveRedis`): what every other connection is opened on. */
  readonly deployment: RedisDeployment;
  /** Request-path commands (`requestPathOptions`: bounded, an outage becomes a 503 within about a second, never a hang). */
  readonly redis: RedisClient;
  /** BullMQ queues (publication, /metrics job counts); shared by every queue of the app. */
  readonly bull: RedisClient;
}

/** Opens the REST app's connections (asks REDIS_URL whether it is a cluster first; rejects while Redis does not answer). */
export async function openApiConnections(config: Config, logger: Logger): Promise<ApiConnections> {
  const deployment = await resolveRedis(redisTargetOf(config));
  // Both coalesce a turn's commands into one socket write (coalesceWrites): a write request makes
  // three commands, and under load many requests' commands fall in one turn.
  const redis = coalesceWrites(
    connectRedis(deployment, requestPathOptions({ commandTimeout: config.redisCommandTimeoutMs })),
  );
  redis.on(
    'error',
    throttledErrorLog((f, m) => logger.warn(f, m), 'redis connection error'),
  );
  // Queues only add and count (no blocking reads): bounded like the request path, so a write's
  // enqueue (after the record is durable in the outbox) fails within a second instead of hanging.
  const bull = coalesceWrites(
    createBullRedis(deployment, requestPathOptions({ commandTimeout: config.redisCommandTimeoutMs })),
  );
  bull.on(
    'error',
    throttledErrorLog((f, m) => logger.warn(f, m), 'bullmq connection error'),
  );
  return { deployment, redis, bull };
}

/** The records and chain scopes of the REST app, as `composeApi` and the records test fixtures build them. */
export interface ApiRecords {
  readonly records: Records;
  readonly chain: ArcChain;
  readonly queue: BullPublishQueue;
  /** The publication wing on the app's connections (the API runs only its producer; fixtures start its workers). */
  readonly publication: Publication;
  /** The funding wallet (its pool) every write reserves from; tests fund it with `fundPool`. */
  readonly wallet: FundingWallet;
  /** ARC's policy writes are built with: fee rate and size limits (cached, refreshed in the background, shared in Redis). */
  readonly fees: FeeRateCache;
  /**
   * This process's membership of the layout registry: its partition count registered, every
   * other layout's partitions followed (`ready` once first read; docs/redis-cluster.md, "Growing
   * the partition count").
   */
  readonly layouts: PartitionLayoutsWatch;
  /** Closes the publication and upkeep queues (the connections stay open). */
  close(): Promise<void>;
}

/**
 * The records scope over the chain scope, on connections the caller opened: the production wiring
 * of the write and read use cases (`composeApi`), reused by every records spec with its prefix.
 */
export function composeApiRecords(o: {
  config: ResolvedConfig;
  clock: Clock;
  logger?: Logger;
  connections: ApiConnections;
  prefix?: string;
}): ApiRecords {
  const prefix = o.prefix ?? o.config.redisPrefix;
  const chain = createArcChain({
    redis: o.connections.redis,
    prefix,
    config: o.config.chain,
    seed: o.config.wallet.seed,
  });
  const wallet = createFundingWallet(o.connections.redis, { ...o.config, redisPrefix: prefix }, o.clock);
  const publication = createPublication({
    redis: o.connections.redis,
    bull: o.connections.bull,
    prefix,
    config: o.config,
    chain,
    pool: wallet.pool,
    clock: o.clock,
    ...(o.logger ? { logger: o.logger } : {}),
  });
  const { queue } = publication;
  // Every live partition (other layouts' too) is swept, summed and funded; roots go to our own.
  const layouts = joinPartitionLayouts(
    o.connections.redis,
    prefix,
    wallet.pool.partitions.count,
    wallet.pool.partitions.layouts,
    {
      onError: (err) => o.logger?.warn({ err: err.message }, 'partition layout registry unavailable; retrying'),
    },
  );
  const upkeep = new WalletUpkeepRequester(o.connections.bull, prefix);
  const fees = feeRateCache(o.config, o.connections.redis, prefix, o.logger);
  // Read the shared policy and fetch ARC's now, not on the first write (which would otherwise be
  // refused or built at the floor); never awaited.
  void fees.start();
  const records = createRecords({
    config: o.config,
    clock: o.clock,
    ...(o.logger ? { logger: o.logger } : {}),
    redis: o.connections.redis,
    prefix,
    builder: chain.builder,
    funding: {
      pool: wallet.pool,
      feeRate: () => fees.current(),
      policy: () => fees.writePolicy(),
      requestUpkeep: () => upkeep.request(),
      // One round trip per write: funding sampled from free, spent only if still free (the
      // denomination only: larger UTXOs are the splitter's reservoir).
      takeFromFree: { belowSatoshis: 2 * o.config.wallet.utxoSatoshis },
    },
    reader: chain.reader,
    queue,
    // MAX_UNCONFIRMED_LINKS counts a chain's versions without a stored proof.
    confirmedIndexKeyOf: inclusionsKeyOf(prefix),
  });
  return {
    records,
    chain,
    queue,
    publication,
    wallet,
    fees,
    layouts,
    close: async () => {
      layouts.stop();
      await publication.close().catch(() => undefined);
      await upkeep.close().catch(() => undefined);
      await chain.close();
    },
  };
}

/**
 * ARC's policy for record transactions: `GET /v1/policy` (fee rate 2x its mining fee, never below
 * `FEE_FLOOR_SATS_PER_KB`; size limits), fetched in the background every 5 minutes and shared
 * with every process through Redis; a write never waits for ARC. On the devnet the floor prices
 * writes until the first answer; on testnet and mainnet writes answer 503 FEE_POLICY_UNKNOWN
 * while no policy younger than `FEE_POLICY_MAX_AGE_MS` is known (whatever ARC_URL points at: the
 * network decides, since only the devnet node's fee is known in advance).
 */
function feeRateCache(config: Config, redis: RedisClient, prefix: string, logger: Logger | undefined): FeeRateCache {
  const arc = new ArcClient({
    url: config.chain.arcUrl,
    ...(config.chain.arcApiKey ? { apiKey: config.chain.arcApiKey } : {}),
    timeoutMs: config.chain.arcTimeoutMs,
  });
  return new FeeRateCache({
    fetchPolicy: arcFeePolicy(arc),
    floorSatsPerKb: config.wallet.feeFloorSatsPerKb,
    required: config.network !== 'devnet',
    maxAgeMs: config.wallet.feePolicyMaxAgeMs,
    shared: { redis, key: walletKeys(prefix).feePolicy },
    onError: (err) =>
      logger?.debug(
        { err: err instanceof Error ? err.message : String(err) },
        'ARC fee policy unavailable; using the last known rate or the floor',
      ),
  });
}

export interface ComposedApi {
  readonly deps: ApiDeps &
    Required<Pick<ApiDeps, 'identity' | 'records' | 'metrics' | 'idempotency' | 'queues' | 'webhooks'>>;
  /** The records and chain scopes behind `deps.records` (tests read the store, queue and chain). */
  readonly recordsScope: ApiRecords;
  /** Closes what `composeApi` opened, in order: queues, then services, then connections (after the HTTP server has drained). */
  close(): Promise<void>;
}

/**
 * The production composition of the REST app: connections, the chain scope, and every feature's
 * service. `main.ts` runs it with the process configuration; tests run the very same wiring with a
 * test configuration.
 */
export async function composeApi(configured: Config, logger: Logger, clock: Clock): Promise<ComposedApi> {
  const connections = await openApiConnections(configured, logger);
  const { deployment, redis, bull } = connections;
  // Everything opened so far, closed in reverse if the composition fails half-way (Redis went away
  // during start): main.ts retries, and a failed attempt must leave no connection reconnecting.
  const undo: (() => Promise<unknown> | void)[] = [() => closeConnections([bull, redis])];
  const rollback = async () => {
    for (const step of undo.reverse()) await Promise.resolve(step()).catch(() => undefined);
  };
  try {
    // REDIS_PARTITIONS unset: the count this Redis implies (every process resolves the same).
    const config = await withResolvedPartitions(redis, configured);
    // Never beside a pool of another partition layout: its records and funding would be invisible.
    await refuseUnpartitionedPool(redis, config.redisPrefix, config.redisPartitions);
    await refuseOnePartitionOverLayouts(redis, config.redisPrefix, config.redisPartitions);
    const claims = new ClaimsService({ config, redis, clock });
    // Identity on connections of its own: key invalidations (pub/sub; also what the key queue's
    // event reader is duplicated from: QueueEvents blocks, so it owns its copy) and redis-om reads.
    const identity = await openIdentity(deployment, {
      config,
      logger,
      clock,
      redis,
      // Per-key and per-tenant rate limits (one EVALSHA per authenticated request; none when unset).
      ...optional('admission', RateLimiter.admission(redis, config.redisPrefix, config.rateLimit)),
    });
    undo.push(() => identity.close());
    if (config.bootstrapApiKey) {
      const boot = await registerBootstrapKey({ redis, config, clock }, config.bootstrapApiKey);
      logger.info({ keyId: boot.id, tenant: boot.tenant, created: boot.created }, 'bootstrap api key registered');
    }
    const scope = composeApiRecords({ config, clock, logger, connections });
    undo.push(() => scope.close());
    await scope.layouts.ready;
    const records = {
      reads: scope.records.reads,
      writes: scope.records.writes,
      receipts: scope.records.receipts,
      auth: identityRecordsAuth(identity),
    };
    const webhooks = createWebhooks({ config, redis, prefix: config.redisPrefix, clock });
    // Queue handles for /metrics (job counts) and the read-only dashboard; they never add jobs, and
    // never rewrite a queue's meta hash (skipMetasUpdate): a handle without `streams` options would
    // reset the records queue's event-stream cap to BullMQ's 10,000 (~0.5 KB a record of Redis memory).
    const observed = Object.values(QUEUES).map(
      (name) =>
        new Queue(name, { connection: bull, prefix: bullPrefix(config.redisPrefix, name), skipMetasUpdate: true }),
    );
    for (const q of observed)
      q.on('error', (err) => logger.warn({ err: err.message, queue: q.name }, 'metrics queue error'));
    const metrics = createApiMetrics({
      queueCounts: async () =>
        Object.fromEntries(
          await Promise.all(
            observed.map(
              async (q) => [q.name, await q.getJobCounts('waiting', 'active', 'delayed', 'failed')] as const,
            ),
          ),
        ),
      pendingPublications: () => scope.records.store.outboxSize(),
      tipHeight: () => scope.chain.reader.tipHeight(),
      arc: {
        unproven: () => scope.chain.store.watchedCount(),
        rejections: () => scope.chain.store.rejections(),
      },
    });
    // ARC callbacks are queued on the bounded BullMQ connection (a Redis outage is a 503 within
    // about a second) and proven by the worker's arc-callbacks role.
    const { arcCallbackUrl, arcCallbackToken } = config.chain;
    const callbackQueue =
      arcCallbackUrl && arcCallbackToken
        ? arcCallbackQueue(bull, config.redisPrefix, 2 * config.redisCommandTimeoutMs)
        : undefined;
    const arcCallback =
      callbackQueue && arcCallbackToken ? { arcCallback: { token: arcCallbackToken, queue: callbackQueue } } : {};
    const idempotency = new IdempotencyStore(redis, config.redisPrefix);
    return {
      deps: {
        config,
        logger,
        redis,
        clock,
        claims,
        identity,
        records,
        metrics,
        idempotency,
        queues: observed,
        webhooks: webhooks.admin,
        feePolicy: () => scope.fees.status(),
        ...arcCallback,
      },

      recordsScope: scope,
      close: async () => {
        await Promise.all(observed.map((q) => q.close().catch(() => undefined)));
        await callbackQueue?.close().catch(() => undefined);
        await scope.close();
        await identity.close();
        await closeConnections([bull, redis]);
      },
    };
  } catch (err) {
    await rollback();
    throw err;
  }
}

/** Quits each connection in turn, bounded: with Redis down a graceful QUIT would wait for a reconnection forever. */
export async function closeConnections(connections: readonly RedisClient[]): Promise<void> {
  for (const c of connections) {
    await Promise.race([c.quit().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
    c.disconnect();
  }
}

function optional<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}
