import type { Redis } from 'ioredis';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import type { ChainKeys } from '@proofline/chain-bsv';
import { DevnetBlockProducer } from './block-producer';
import { DevnetBlocks } from './devnet-blocks';
import { DevnetPublisher } from './devnet-publisher';
import { DevnetReader } from './devnet-reader';

/** The connections the chain scope runs on; all opened (and closed) by the app. */
export interface DevnetChainScope {
  /** Command connection. */
  readonly redis: Redis;
  /** Subscriber connection for block events; only apps that read {@link DevnetChain.blocks} events need it. */
  readonly subscriber?: Redis;
  /** The deployment's (or the test's) Redis prefix. */
  readonly prefix: string;
  /** Chain keys (tests pin them); default: derived as in production. */
  readonly keys?: ChainKeys;
}

/** The chain scope on the embedded devnet: every port the apps use, built in one place. */
export interface DevnetChain {
  /** Builds and signs record transactions (`TransactionBuilder`). */
  readonly builder: BsvTransactionBuilder;
  /** The mempool door (`ChainPublisher`). */
  readonly publisher: DevnetPublisher;
  /** Inclusions and proofs (`ChainReader`), plus devnet-only reads (spends, raw transactions). */
  readonly reader: DevnetReader;
  /** Mines the next block (the worker's chain-blocks role runs it on a schedule). */
  readonly producer: DevnetBlockProducer;
  /** Blocks, headers and block events (`BlockReader`); present when a subscriber was given. */
  readonly blocks: DevnetBlocks | null;
  /** Unsubscribes block events; the connections stay the app's. */
  close(): Promise<void>;
}

/** The one factory of the chain scope (API, GraphQL, workers, CLI, benchmarks and tests). Opens nothing. */
export function createDevnetChain(scope: DevnetChainScope): DevnetChain {
  const keys = scope.keys ? { keys: scope.keys } : {};
  const reader = new DevnetReader(scope.redis, scope.prefix);
  const blocks = scope.subscriber ? new DevnetBlocks(reader, scope.subscriber, scope.prefix) : null;
  return {
    builder: new BsvTransactionBuilder(keys),
    publisher: new DevnetPublisher(scope.redis, scope.prefix),
    reader,
    producer: new DevnetBlockProducer(scope.redis, scope.prefix, keys),
    blocks,
    close: async () => {
      await blocks?.close();
    },
  };
}
