import { confirmationOptions, runConfirmationPass, startConfirmationWorker } from '@proofline/chain-arc';
import type {
  ArcChain,
  ConfirmationPassDeps,
  ConfirmationPassOptions,
  ConfirmationPassReport,
  RunningConfirmationWorker,
} from '@proofline/chain-arc';
import type { ChainPublisher } from '@proofline/chain-domain';
import { inputsReleasable } from '@proofline/chain-wallet';
import { RecordStore } from '@proofline/records-data-access';
import type { Clock, Config } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import type { Logger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import { publicationPause } from './publish';
import { deferringQueue } from './producer';
import type { BullPublishQueue } from './producer';
import type { PublicationSettlement } from './publish';
import {
  heldWhileConfirming,
  publicationSettlement,
  rawTxOf,
  refusedWhileConfirming,
  seenWhileConfirming,
} from './settlement';
import type { FundingSettle } from './settlement';
import { startRecordsPublisher } from './worker';
import type { RecordsPublisherOptions, RunningPublisher } from './worker';

export interface PublicationOptions {
  /** The app's command connection (records, proofs, the confirmation lock). Not closed here. */
  readonly redis: RedisClient;
  /** The app's BullMQ connection (`maxRetriesPerRequest: null`). Not closed here. */
  readonly bull: RedisClient;
  /** The deployment's (or test's) Redis prefix. */
  readonly prefix: string;
  /** PUBLISH_COALESCE_MS, WORKER_CONCURRENCY and the chain settings (ARC_POLL_MS, callback grace). */
  readonly config: Pick<Config, 'chain' | 'publishCoalesceMs' | 'workerConcurrency'>;
  /** The chain scope: its batching publisher, ARC client, headers and proof store (watch set). */
  readonly chain: Pick<ArcChain, 'publisher' | 'arc' | 'client' | 'headers' | 'store'>;
  /** The funding wallet's pool: confirmed on acceptance, failed on refusal. */
  readonly pool: FundingSettle;
  readonly clock: Clock;
  /** Default: silent. */
  readonly logger?: Logger;
  /**
   * The webhooks scope's watch step around the chain publisher (`watchPublications` of
   * @proofline/webhooks-feature): a record of a tenant with webhooks enters the watch set before
   * its transaction is submitted. Absent: records are published unwatched.
   */
  readonly webhooks?: (publisher: ChainPublisher) => ChainPublisher;
}

/** Tuning of the publisher worker (defaults: WORKER_CONCURRENCY, sweeper every 2 s); tests lower or disable it. */
export type PublisherTuning = Partial<
  Pick<
    RecordsPublisherOptions,
    'concurrency' | 'sweepAfterMs' | 'sweepEveryMs' | 'followMax' | 'lockDuration' | 'stalledInterval'
  >
>;

/** Unsettled record transactions each confirmation pass checks for a proof stored without a poll. */
const UNSETTLED_CHECKED = 200;

/** The publication wing: what the API, the worker roles, the benchmarks and the test fixtures run. */
export interface Publication {
  /** The producer (the write use cases' `PublishQueue`): group-committed batch jobs. */
  readonly queue: BullPublishQueue;
  /** The records store publication settles on. */
  readonly store: RecordStore;
  /** What a publication settles besides the record: funding and the confirmation watch set. */
  readonly settlement: PublicationSettlement;
  /**
   * Transactions the chain showed SEEN_ON_NETWORK or MINED outside a confirmation pass (a MINED
   * callback proved them: the arc-callbacks role's `onProven`): funding confirmed, a failed record
   * published again (`seenWhileConfirming`, as the pass does). Idempotent.
   */
  seen(txIds: readonly string[]): Promise<void>;
  /** Starts the publisher worker and the outbox sweeper (once; later calls return the same one). */
  startPublisher(tuning?: PublisherTuning): RunningPublisher;
  /**
   * Starts a confirmation worker every ARC_POLL_MS, with the pass options the chain settings
   * imply (`confirmationOptions`) unless `options` overrides them. Closed by `close()`.
   */
  startConfirmations(options?: Omit<ConfirmationPassOptions, 'now'>): Promise<RunningConfirmationWorker>;
  /** One confirmation pass now, without the scheduler (tests, the CLI). */
  confirmOnce(): Promise<ConfirmationPassReport>;
  /** Stops what was started (workers first), then closes the producer; the connections stay open. */
  close(): Promise<void>;
}

/**
 * The one composition of publication, from a durable outbox entry to a stored proof:
 *
 * producer (`queue`) → publisher worker (publish.ts: submit, settle, follow the chain) →
 * settlement (funding pool, watch set) → confirmation worker (poll ARC, verify BUMPs, store
 * proofs; re-broadcast the same bytes; fail records ARC refused later).
 *
 * Opens no connection and starts nothing until asked: the API only uses `queue`; the worker's
 * records role starts the publisher, its confirmations role the confirmation worker.
 */
export function createPublication(o: PublicationOptions): Publication {
  const logger = o.logger ?? createLogger({ level: 'silent', name: 'publication' });
  const confirmLogger = logger.child({ role: 'chain-confirmations' });
  const publishLogger = logger.child({ role: 'records-publish' });
  // Partitioned as the pool is, sharing its txId index (and its cache).
  const store = new RecordStore(o.redis, o.prefix, {
    partitions: o.pool.partitions?.count ?? 1,
    ...(o.pool.partitions?.layouts ? { layouts: o.pool.partitions.layouts } : {}),
    ...(o.pool.index ? { index: o.pool.index } : {}),
  });
  // The proofs this composition stores (confirmation pass, ARC callbacks on the same chain scope)
  // are indexed by the record's tenant: the tenant's blocks (GraphQL `myBlocks`).
  o.chain.store.setOwnerLookup((txIds) => store.tenantsOf(txIds));
  const queue = deferringQueue(o.bull, o.prefix, store, o.clock, o.config.publishCoalesceMs);
  const settlement = publicationSettlement({
    pool: o.pool,
    proofs: o.chain.store,
    clock: o.clock,
    // A refused tx that never reached the network may give its inputs back (release rules).
    releasable: (code) => inputsReleasable({ code, reachedNetwork: false }),
    ...confirmationOptions(o.config.chain),
  });
  const seen = seenWhileConfirming({ records: store, pool: o.pool, clock: o.clock, logger: confirmLogger });
  const passDeps: ConfirmationPassDeps = {
    client: o.chain.client,
    rebroadcast: (txs) => o.chain.arc.submitMany(txs),
    headers: o.chain.headers,
    store: o.chain.store,
    redis: o.redis,
    prefix: o.prefix,
    rawTxOf: rawTxOf(store),
    onRefused: refusedWhileConfirming({ records: store, pool: o.pool, clock: o.clock }),
    onSeen: seen,
    onHeld: heldWhileConfirming({ records: store, clock: o.clock, logger: confirmLogger }),
    ...(o.pool.unsettled
      ? {
          unsettled: async () =>
            ((await o.pool.unsettled?.(UNSETTLED_CHECKED)) ?? []).filter((t) => t.kind === 'record').map((t) => t.txId),
        }
      : {}),
    logger: confirmLogger,
  };
  let publisher: RunningPublisher | undefined;
  const confirmations: Promise<RunningConfirmationWorker>[] = [];
  return {
    queue,
    store,
    settlement,
    seen,
    startPublisher(tuning = {}) {
      publisher ??= startRecordsPublisher({
        connection: o.bull,
        store,
        queue,
        prefix: o.prefix,
        chain: o.webhooks ? o.webhooks(o.chain.publisher) : o.chain.publisher,
        settlement,
        pause: publicationPause({ redis: o.redis, prefix: o.prefix, clock: o.clock, logger: publishLogger }),
        clock: o.clock,
        logger: publishLogger,
        concurrency: o.config.workerConcurrency,
        proven: async (txIds) => (await o.chain.store.inclusions(txIds)).map((i) => i !== null),
        ...tuning,
      });
      return publisher;
    },
    startConfirmations(options = confirmationOptions(o.config.chain)) {
      const running = startConfirmationWorker({
        connection: o.bull,
        redis: o.redis,
        redisPrefix: o.prefix,
        pollMs: o.config.chain.pollMs,
        pass: passDeps,
        options,
        logger: confirmLogger,
      });
      confirmations.push(running);
      return running;
    },
    confirmOnce() {
      return runConfirmationPass(passDeps, confirmationOptions(o.config.chain));
    },
    async close() {
      await publisher?.close();
      for (const running of confirmations.splice(0)) await (await running.catch(() => undefined))?.close();
      await queue.close();
    },
  };
}
