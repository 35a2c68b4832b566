import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import { BsvSpvCodec } from '@proofline/chain-bsv';
import type { ChainReader, SpvCodec, TransactionBuilder } from '@proofline/chain-domain';
import { RecordStore } from '@proofline/records-data-access';
import { RecordReads } from './record-reads';
import { RecordReceipts } from './record-receipts';
import { RecordWrites } from './record-writes';
import type { RecordFunding } from './record-writes';
import type { PublishQueue, RecordsConfig } from './types';

/** What the read side of the records scope is built from: a command connection the app opened. */
export interface RecordReadsScope {
  readonly config: RecordsConfig;
  /** The app's command connection (the factory never opens one). */
  readonly redis: RedisClient;
  /** Key prefix of the records keys (`config.redisPrefix`; tests pass a unique one). */
  readonly prefix: string;
  readonly reader: ChainReader;
  /** BEEF for receipts; default the `@bsv/sdk` codec of chain-bsv (every chain Proofline serves is BSV). */
  readonly spv?: SpvCodec;
  /** Number of records partitions (`REDIS_PARTITIONS`; default 1). A writing scope takes its pool's. */
  readonly partitions?: number;
}

export interface RecordsScope extends RecordReadsScope {
  readonly clock: Clock;
  readonly builder: TransactionBuilder;
  /** The wallet's UTXO pool every write reserves its funding from, and the fee rate. */
  readonly funding: RecordFunding;
  readonly queue: PublishQueue;
  readonly logger?: Logger;
  /**
   * The proof store's hash holding a txId's proof (chain-arc `arcKeys(prefix).of(txId).inclusions`),
   * which MAX_UNCONFIRMED_LINKS is counted against. Absent: no cap (compositions without proofs).
   */
  readonly confirmedIndexKeyOf?: (txId: string) => string;
}

export interface Records {
  readonly reads: RecordReads;
  readonly writes: RecordWrites;
  /** Receipts of confirmed records (`GET …/{txId}/receipt`). */
  readonly receipts: RecordReceipts;
  /** The store both sides use (the publisher and /metrics read it too). */
  readonly store: RecordStore;
}

/** The records scope for an app that only reads (GraphQL): no builder, no queue. */
export function createRecordReads(scope: RecordReadsScope): RecordReads {
  return new RecordReads({
    config: scope.config,
    store: readStore(scope),
    reader: scope.reader,
  });
}

function readStore(scope: RecordReadsScope): RecordStore {
  return new RecordStore(scope.redis, scope.prefix, { partitions: scope.partitions ?? 1 });
}

/** The receipt use case over the records store and the chain reader (GraphQL builds it beside its reads). */
export function createRecordReceipts(scope: RecordReadsScope): RecordReceipts {
  return receiptsOf(scope, readStore(scope));
}

function receiptsOf(scope: RecordReadsScope, store: RecordStore): RecordReceipts {
  return new RecordReceipts({ config: scope.config, store, reader: scope.reader, spv: scope.spv ?? new BsvSpvCodec() });
}

/**
 * The records scope: the one place `RecordReads` and `RecordWrites` are built, for the API, the
 * benchmarks and every test fixture alike. Opens nothing; closes nothing.
 */
export function createRecords(scope: RecordsScope): Records {
  // Partitioned as the funding pool is (its shards are the partitions' funding), sharing its index.
  const { pool } = scope.funding;
  const store = new RecordStore(scope.redis, scope.prefix, {
    partitions: pool.partitions.count,
    layouts: pool.partitions.layouts,
    index: pool.index,
    ...(scope.confirmedIndexKeyOf === undefined ? {} : { confirmedIndexKeyOf: scope.confirmedIndexKeyOf }),
  });
  const reads = new RecordReads({ config: scope.config, store, reader: scope.reader });
  const writes = new RecordWrites({
    config: scope.config,
    clock: scope.clock,
    store,
    builder: scope.builder,
    funding: scope.funding,
    queue: scope.queue,
    ...(scope.logger ? { logger: scope.logger } : {}),
  });
  return { reads, writes, receipts: receiptsOf(scope, store), store };
}
