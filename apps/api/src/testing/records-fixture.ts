// Shared set-up of the record route specs (not a spec itself): the real app on port 0 (the
// identity harness), real Redis and BullMQ, the real chain (BSV transaction builder, embedded
// devnet publisher, reader and block producer) and the real identity auth: every x-api-key is a
// real key, registered with the bootstrap admin function or issued through the key use case and
// its BullMQ key worker, and verified by the production `requireKey` middleware.
import type { ConnectionOptions } from 'bullmq';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import { DevnetBlockProducer, DevnetPublisher, DevnetReader } from '@proofline/chain-devnet';
import type { DevnetBlock } from '@proofline/chain-devnet';
import { createBootstrapKey } from '@proofline/identity-feature';
import { RecordStore } from '@proofline/records-data-access';
import { BullPublishQueue, RecordsService, startRecordsPublisher } from '@proofline/records-feature';
import type { RunningPublisher } from '@proofline/records-feature';
import type { Config } from '@proofline/shared-config';
import { bullPrefix } from '@proofline/shared-jobs';
import { createLogger } from '@proofline/shared-logger';
import { bullConnection, createRedis, deleteByPrefix } from '@proofline/shared-redis';
import type { Redis } from '@proofline/shared-redis';
import { testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { identityRecordsAuth } from '../routes/records-http';
import { startApi, startKeyWorker } from './harness';
import type { RunningApi } from './harness';

/** The callers every records spec uses; `f.keys[role]` is the role's raw API key. */
export const KEYS = {
  /** Bootstrap admin key of tenant-a (Issuer_Admin + Verifier_Admin). */
  writerA: 'writerA',
  /** Issuer_User key of tenant-a, issued by writerA through the key use case. */
  writerA2: 'writerA2',
  /** Bootstrap admin key of tenant-b. */
  writerB: 'writerB',
  /** Verifier_Auditor key of tenant-a (reads and match only), issued by writerA. */
  auditorA: 'auditorA',
} as const;
export type KeyRole = keyof typeof KEYS;

/** The real chain adapters of the fixture, on its Redis prefix. */
export interface FixtureChain {
  /** The production builder (signed BSV transactions), for specs that build a competing transaction. */
  readonly builder: BsvTransactionBuilder;
  /** The devnet's mempool door, as a third party would submit to it. */
  readonly publisher: DevnetPublisher;
  readonly reader: DevnetReader;
}

export interface RecordsFixture {
  readonly base: string;
  readonly prefix: string;
  /** The API's request-path connection. */
  readonly redis: Redis;
  readonly config: Config;
  readonly api: RunningApi;
  readonly keys: Readonly<Record<KeyRole, string>>;
  readonly chain: FixtureChain;
  readonly store: RecordStore;
  readonly queue: BullPublishQueue;
  /** Starts the records publisher worker (real BullMQ, devnet publisher) once; later calls return it. */
  startPublisher(): RunningPublisher;
  /** Produces one devnet block now (the genesis block first on first use) and returns it. */
  produceBlock(): Promise<DevnetBlock>;
  /** Every records key under the prefix (to assert "nothing written"). */
  recordKeys(): Promise<string[]>;
  /** Every devnet key under the prefix (to assert "nothing reached the chain"). */
  chainKeys(): Promise<string[]>;
  /** One HTTP call; `key` is a caller role (default writerA) or null for no x-api-key header. */
  request(method: string, path: string, opts?: { key?: KeyRole | null; body?: Uint8Array | string; type?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

export async function startRecordsFixture(env: Record<string, string> = {}): Promise<RecordsFixture> {
  const prefix = uniquePrefix('rec');
  const fullEnv = { MAX_LINKS: '5', MAX_RECORD_BYTES: '1024', ...env };
  const logger = createLogger({ level: 'silent', name: 'test' });
  const queue = new BullPublishQueue(bullConnection(testRedisUrl()) as ConnectionOptions, bullPrefix(prefix));
  const api = await startApi({
    prefix,
    env: fullEnv,
    extend: async (base) => {
      const service = new RecordsService({
        config: base.config,
        clock: base.clock,
        logger,
        store: new RecordStore(base.redis, prefix),
        builder: new BsvTransactionBuilder(),
        reader: new DevnetReader(base.redis, prefix),
        queue,
      });
      return { deps: { records: { service, auth: identityRecordsAuth(base.identity) } }, close: () => queue.close() };
    },
  });
  const { config, redis, identity, clock } = api.deps;

  // The worker side has its own connection, as in apps/worker.
  const workerRedis = createRedis(config.redisUrl, { maxRetriesPerRequest: null });
  const chain: FixtureChain = {
    builder: new BsvTransactionBuilder(),
    publisher: new DevnetPublisher(workerRedis, prefix),
    reader: new DevnetReader(workerRedis, prefix),
  };
  const producer = new DevnetBlockProducer(workerRedis, prefix);

  // Real keys: two bootstrap admins, and two narrower keys issued by tenant-a's admin through the
  // key use case (processed by the real key worker, then stopped: it is not needed afterwards).
  const admin = { redis, config, clock };
  const writerA = await createBootstrapKey(admin, 'tenant-a');
  const writerB = await createBootstrapKey(admin, 'tenant-b');
  const keyWorker = await startKeyWorker({ prefix, env: fullEnv });
  let writerA2: string;
  let auditorA: string;
  try {
    const owner = await identity.authenticate(writerA);
    writerA2 = (await identity.createKey(owner, { name: 'second writer', permissions: ['Issuer_User'] })).rawKey;
    auditorA = (await identity.createKey(owner, { name: 'auditor', permissions: ['Verifier_Auditor'] })).rawKey;
  } finally {
    await keyWorker.close();
  }
  const keys: Record<KeyRole, string> = { writerA, writerA2, writerB, auditorA };

  const store = new RecordStore(redis, prefix);
  let publisher: RunningPublisher | undefined;
  return {
    base: api.baseUrl,
    prefix,
    redis,
    config,
    api,
    keys,
    chain,
    store,
    queue,
    startPublisher() {
      publisher ??= startRecordsPublisher({
        connection: bullConnection(config.redisUrl) as ConnectionOptions,
        bullPrefix: bullPrefix(prefix),
        store: new RecordStore(workerRedis, prefix),
        chain: new DevnetPublisher(workerRedis, prefix),
        clock,
        logger,
        concurrency: 4,
        sweepEveryMs: 0,
      });
      return publisher;
    },
    async produceBlock() {
      const produced = await producer.produceBlock(new Date());
      if (produced.status !== 'produced') throw new Error(`records fixture: no block produced (${produced.reason})`);
      const block = await chain.reader.blockByHash(produced.hash);
      if (!block) throw new Error(`records fixture: block ${produced.hash} not found after commit`);
      return block;
    },
    async recordKeys() {
      return (await redis.keys(`${prefix}:records:*`)).sort();
    },
    async chainKeys() {
      return (await redis.keys(`${prefix}:chain:*`)).sort();
    },
    request(method, path, opts = {}) {
      const headers: Record<string, string> = {};
      const role = opts.key === undefined ? 'writerA' : opts.key;
      if (role !== null) headers['x-api-key'] = keys[role];
      if (opts.body !== undefined && opts.type !== null) headers['content-type'] = opts.type ?? 'application/octet-stream';
      return fetch(`${api.baseUrl}${path}`, { method, headers, ...(opts.body !== undefined ? { body: opts.body as unknown as string } : {}) });
    },
    async close() {
      if (publisher) await publisher.close();
      await api.close();
      await deleteByPrefix(workerRedis, prefix);
      await workerRedis.quit();
    },
  };
}
