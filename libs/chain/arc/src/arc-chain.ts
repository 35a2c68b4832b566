import type { RedisClient } from '@proofline/shared-redis';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import type { BsvTransactionBuilderOptions, ChainKeys } from '@proofline/chain-bsv';
import type { Config } from '@proofline/shared-config';
import { ArcBlocks } from './arc-blocks';
import type { ArcClient } from './arc-client';
import { ArcSubmitBatcher } from './arc-publisher';
import type { ArcChainPublisher, SubmitBatcherOptions } from './arc-publisher';
import { createArcServices } from './arc-services';
import type { WocHeadersClient } from './headers-client';
import type { ArcProofStore } from './proof-store';

/** The connections and settings the chain scope runs on; all opened (and closed) by the app. */
export interface ArcChainScope {
  /** Command connection. */
  readonly redis: RedisClient;
  /** Subscriber connection for block events; only apps that read `blocks.blockEvents()` need it. */
  readonly subscriber?: RedisClient;
  /** The deployment's (or the test's) Redis prefix. */
  readonly prefix: string;
  /** `config.chain`: ARC_URL, ARC_API_KEY, callbacks, ARC_TIMEOUT_MS, ARC_MAX_IN_FLIGHT, HEADERS_URL. */
  readonly config: Config['chain'];
  /** Signing keys of the builder; default derived from `seed` (WALLET_SEED). */
  readonly keys?: ChainKeys;
  readonly seed?: string;
  /** Builder options (fee rate …); the funding inputs come from the wallet's pool. */
  readonly builder?: Omit<BsvTransactionBuilderOptions, 'keys' | 'seed'>;
  /** Coalescing of concurrent submissions into `POST /v1/txs` (worker). */
  readonly batching?: SubmitBatcherOptions;
}

/** The chain scope of the service: every port the apps use, on ARC, built in one place. */
export interface ArcChain {
  /** Builds and signs record transactions (`TransactionBuilder`). */
  readonly builder: BsvTransactionBuilder;
  /** `ChainPublisher` that batches concurrent submissions into `POST /v1/txs`. */
  readonly publisher: ArcSubmitBatcher;
  /** The unbatched publisher (`POST /v1/tx`, `submitMany`). */
  readonly arc: ArcChainPublisher;
  /** Inclusions and verified proofs (`ChainReader`): what this service verified, nothing else. */
  readonly reader: ArcProofStore;
  /** The proof store (watch set, block headers, rejections); the same object as `reader`. */
  readonly store: ArcProofStore;
  readonly client: ArcClient;
  /** The headers source proofs are checked against (HEADERS_URL). */
  readonly headers: WocHeadersClient;
  /** Blocks from the proof store (`BlockReader`); events need a subscriber. */
  readonly blocks: ArcBlocks;
  readonly prefix: string;
  /** Unsubscribes block events; the connections stay the app's. */
  close(): Promise<void>;
}

/**
 * The one factory of the chain scope (API, GraphQL, workers, CLI, benchmarks and tests): ARC over
 * HTTP (`ARC_URL`, the devnet node by default) for publication and status, `HEADERS_URL` for
 * headers, the Redis proof store for reads. Opens no connection; starts no timer.
 */
export function createArcChain(scope: ArcChainScope): ArcChain {
  const services = createArcServices(scope.config, scope.redis, scope.prefix);
  const keys = scope.keys ? { keys: scope.keys } : scope.seed ? { seed: scope.seed } : {};
  const blocks = new ArcBlocks(services.store, scope.subscriber ?? null, scope.prefix);
  return {
    builder: new BsvTransactionBuilder({ ...scope.builder, ...keys }),
    publisher: new ArcSubmitBatcher(services.publisher, {
      maxInFlight: scope.config.arcMaxInFlight,
      ...scope.batching,
    }),
    arc: services.publisher,
    reader: services.store,
    store: services.store,
    client: services.client,
    headers: services.headers,
    blocks,
    prefix: scope.prefix,
    close: () => blocks.close(),
  };
}
