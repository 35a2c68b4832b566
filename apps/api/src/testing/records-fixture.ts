// Shared set-up of the record route specs (not a spec itself): the real app on port 0 (the
// identity harness), real Redis and BullMQ, the real chain path (BSV transaction builder funded
// from the wallet's pool, ARC over HTTP to the devnet node started on port 0 by
// `startArcDevnet`, proofs verified against the node's headers) and the real identity auth: every
// x-api-key is a real key, registered with the bootstrap admin function or issued through the
// key use case and its BullMQ key worker, and verified by the production `requireKey` middleware.
import type { FundingUtxo } from '@proofline/chain-wallet';
import { startArcDevnet } from '@proofline/devnet-testing';
import type { ArcDevnet } from '@proofline/devnet-testing';
import { createBootstrapKey } from '@proofline/identity-feature';
import type { RecordStore } from '@proofline/records-data-access';
import type { BullPublishQueue, PublicationSettlement, RunningPublisher } from '@proofline/records-publication';
import { composePublicationSide } from '@proofline/records-publication-testing';
import type { Config } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { deleteByPrefix, keyTag } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import { WebhookStore } from '@proofline/webhooks-data-access';
import { watchPublications } from '@proofline/webhooks-feature';
import { eventually, keysMatching, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { send, startApi, startKeyWorker } from './harness';
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

/** A block the node mined, once the service's confirmation pass has seen it. */
export interface MinedBlock {
  readonly hash: string;
  readonly height: number;
  /** Every transaction of the block, coinbase first (the node's view). */
  readonly txIds: readonly string[];
}

export interface RecordsFixture {
  readonly base: string;
  readonly prefix: string;
  /** The API's request-path connection. */
  readonly redis: RedisClient;
  readonly config: Config;
  readonly api: RunningApi;
  readonly keys: Readonly<Record<KeyRole, string>>;
  /** The devnet node, the worker-side chain scope (ARC client, proof store), the funded pool. */
  readonly dev: ArcDevnet;
  /** What the worker's publisher settles with (pool + watch set), for specs that start their own publisher. */
  readonly settlement: PublicationSettlement;
  readonly store: RecordStore;
  readonly queue: BullPublishQueue;
  /**
   * Starts the worker side once (later calls return it): the records publisher (real BullMQ, ARC
   * over HTTP, batched, settling funding) and the confirmation worker (ARC_POLL_MS 100 ms).
   */
  startPublisher(): RunningPublisher;
  /** The node mines one block now; resolves once every watched tx of it has its proof stored. */
  produceBlock(): Promise<MinedBlock>;
  /** The node's ARC status of a transaction (`GET /v1/tx/{txid}`): null when it does not know it. */
  arcStatus(txId: string): Promise<{ txStatus: string; blockHash?: string | null; merklePath?: string | null } | null>;
  /** Real UTXOs to the funding key that are NOT in the pool (for transactions a spec builds itself). */
  spareFunding(count: number): Promise<FundingUtxo[]>;
  /** Every records key under the prefix (to assert "nothing written"). */
  recordKeys(): Promise<string[]>;
  /** Every key of the chain side (node, proofs) under the prefix (to assert "nothing reached the chain"). */
  chainKeys(): Promise<string[]>;
  /** One HTTP call; `key` is a caller role (default writerA) or null for no x-api-key header. */
  request(
    method: string,
    path: string,
    opts?: { key?: KeyRole | null; body?: Uint8Array | string; type?: string | null },
  ): Promise<Response>;
  close(): Promise<void>;
}

/** `fund`: funding UTXOs put in the wallet's pool before the first write (default 200; 0 = empty pool). */
export async function startRecordsFixture(
  env: Record<string, string> = {},
  options: { fund?: number } = {},
): Promise<RecordsFixture> {
  const prefix = uniquePrefix('rec');
  const logger = createLogger({ level: 'silent', name: 'test' });
  // The node first: the API's configuration points ARC_URL/HEADERS_URL at it.
  const nodeRedis = testRedisClient({ maxRetriesPerRequest: null });
  // What the set-up opened so far, closed in reverse when a later step fails: a spec whose
  // beforeAll threw never calls close(), and a client left open keeps jest from exiting.
  const opened: (() => Promise<unknown>)[] = [() => nodeRedis.quit()];
  try {
    // The pool sharded as the service under test is (REDIS_PARTITIONS, or what it resolves when unset).
    const dev = await startArcDevnet({
      redis: nodeRedis,
      prefix,
      ...(env['REDIS_PARTITIONS'] ? { partitions: Number(env['REDIS_PARTITIONS']) } : {}),
    });
    opened.push(() => dev.close());
    const fullEnv = { MAX_LINKS: '5', MAX_RECORD_BYTES: '1024', ...dev.env, ...env };
    const api = await startApi({ prefix, env: fullEnv, fund: 0 });
    opened.push(() => api.close());
    const scope = api.recordsScope;
    const { queue } = scope;
    const { config, redis, identity, clock } = api.deps;
    const fund = options.fund ?? 200;
    if (fund > 0) await dev.fund(fund, 1000);

    // Real keys: two bootstrap admins, and two narrower keys issued by tenant-a's admin through the
    // key use case (processed by the real key worker, then stopped: it is not needed afterwards).
    const admin = { redis, config, clock };
    const writerA = await createBootstrapKey(admin, 'tenant-a');
    const writerB = await createBootstrapKey(admin, 'tenant-b');
    const keyWorker = await startKeyWorker({ prefix, env: fullEnv });
    let writerA2: string;
    let auditorA: string;
    try {
      const owner = await identity.authenticator.authenticate(writerA);
      writerA2 = (await identity.keys.createKey(owner, { name: 'second writer', permissions: ['Issuer_User'] })).rawKey;
      auditorA = (await identity.keys.createKey(owner, { name: 'auditor', permissions: ['Verifier_Auditor'] })).rawKey;
    } finally {
      await keyWorker.close();
    }
    const keys: Record<KeyRole, string> = { writerA, writerA2, writerB, auditorA };

    const store = scope.records.store;
    // The worker side as apps/worker composes it (createPublication, the webhooks watch step
    // included), on connections of its own and the devnet's chain scope.
    const worker = composePublicationSide({
      prefix,
      config,
      pool: dev.pool,
      clock,
      logger,
      chain: dev.chain,
      webhooks: (workerRedis) => (publisher) =>
        watchPublications(publisher, { store: new WebhookStore(workerRedis, prefix), prefix, clock }),
    });
    const { publication } = worker;
    const { settlement } = publication;
    let publisher: RunningPublisher | undefined;
    let confirmations: Promise<unknown> | undefined;
    return {
      base: api.baseUrl,
      prefix,
      redis,
      config,
      api,
      keys,
      dev,
      settlement,
      store,
      queue,
      startPublisher() {
        if (!publisher) {
          publisher = publication.startPublisher({ concurrency: 4, sweepEveryMs: 0 });
          confirmations = publication.startConfirmations();
        }
        return publisher;
      },
      async produceBlock() {
        const mined = await dev.node.mineBlock();
        const res = await fetch(`${dev.node.url}/block/${mined.hash}/header`);
        if (res.status !== 200) throw new Error(`records fixture: block ${mined.hash} has no header`);
        // The confirmation pass (started with the publisher) stores the proofs and the tip.
        if (confirmations) {
          await eventually(
            async () => {
              if ((await dev.chain.store.tip())?.hash !== mined.hash) return false;
              const watched = new Set(await dev.chain.store.watched(100_000));
              return mined.txIds.every((t) => !watched.has(t));
            },
            10_000,
            20,
          );
        } else {
          await publication.confirmOnce();
        }
        return { hash: mined.hash, height: mined.height, txIds: mined.txIds };
      },
      async arcStatus(txId) {
        const res = await fetch(`${dev.node.url}/v1/tx/${txId}`);
        if (res.status === 404) return null;
        return (await res.json()) as { txStatus: string; blockHash?: string | null; merklePath?: string | null };
      },
      spareFunding(count) {
        return dev.fund(count, 1000, { addToPool: false });
      },
      recordKeys() {
        // Every partition's (`{*}`: any hash tag).
        return keysMatching(redis, `${keyTag(prefix, '*')}:records:*`);
      },
      async chainKeys() {
        const [devnet, arc] = await Promise.all(
          ['devnet', 'arc'].map((unit) => keysMatching(redis, `${keyTag(prefix, unit)}:*`)),
        );
        return [...(devnet ?? []), ...(arc ?? [])].sort();
      },
      request(method, path, opts = {}) {
        const role = opts.key === undefined ? 'writerA' : opts.key;
        return send(api, method, path, {
          ...(role !== null ? { key: keys[role] } : {}),
          ...(opts.body !== undefined ? { body: opts.body } : {}),
          contentType: opts.type === undefined ? 'application/octet-stream' : opts.type,
        });
      },
      async close() {
        await worker.close();
        await api.close();
        await dev.close();
        await deleteByPrefix(nodeRedis, prefix);
        await nodeRedis.quit();
      },
    };
  } catch (err) {
    for (const close of opened.reverse()) await close().catch(() => undefined);
    throw err;
  }
}
