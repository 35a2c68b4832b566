/**
 * Growing REDIS_PARTITIONS online (docs/redis-cluster.md, "Growing the partition count"): two
 * writer/worker compositions at P = 8 write roots and linked updates; two at P = 16 start while
 * they keep writing, then the P = 8 ones stop. Each composition is one process's wiring
 * (createRecords + createPublication on connections of its own, its own funding pool and layout
 * registry membership), all on one Redis (a server or a cluster) and one devnet node.
 *
 * The old compositions run no outbox sweeper and lose some of their enqueues (a process that
 * died between accept and enqueue): only a P = 16 sweeper that knows the P = 8 partitions can
 * publish those. The new compositions' shards start empty: only a rebalance that sees the old
 * shards funds them.
 */
import { rebalance } from '@proofline/chain-wallet';
import { FundingPool } from '@proofline/chain-wallet';
import { startArcDevnet } from '@proofline/devnet-testing';
import type { ArcDevnet } from '@proofline/devnet-testing';
import type { RecordWrites } from '@proofline/records-feature';
import { recordsKeys } from '@proofline/records-data-access';
import type { RecordStore } from '@proofline/records-data-access';
import { loadConfig } from '@proofline/shared-config';
import type { Config } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { deleteByPrefix, joinPartitionLayouts, partitionUnit } from '@proofline/shared-redis';
import type { PartitionLayoutsWatch, RedisClient } from '@proofline/shared-redis';
import { eventually, testRedisClient, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { composePublicationSide } from './publication-side';
import type { PublicationSide } from './publication-side';

jest.setTimeout(240_000);

const OLD = 8;
const NEW = 16;
const DENOMINATION = 1000;
const units = (count: number) => Array.from({ length: count }, (_, i) => partitionUnit(i, count));

/** One process of the deployment: its pool, its publication side, its write use cases. */
interface Proc {
  readonly name: string;
  readonly count: number;
  readonly conn: RedisClient;
  readonly pool: FundingPool;
  readonly side: PublicationSide;
  readonly store: RecordStore;
  readonly writes: RecordWrites;
  readonly layouts: PartitionLayoutsWatch;
  close(): Promise<void>;
}

/** A written record: what the caller was told (acknowledged) and by whom. */
interface Acked {
  readonly txId: string;
  readonly chainId: string | null;
  readonly by: string;
}

/** A linked chain: its head (the next update's previous) and token; one writer at a time. */
interface Chain {
  readonly chainId: string;
  readonly createdBy: string;
  head: string;
  token: string;
  busy: boolean;
  updatedBy: string[];
}

describe('growing the partition count online: 8 → 16 under load, nothing lost or duplicated', () => {
  const prefix = uniquePrefix('grow');
  const logger = createLogger({ level: 'silent', name: 'test' });
  const redis = testRedisClient({ maxRetriesPerRequest: null });
  const tenant = { tenant: 'tgrow' };
  const acked: Acked[] = [];
  const chains: Chain[] = [];
  const lostEnqueues = new Set<string>();
  let dev: ArcDevnet;
  let config: Config;
  let miner: NodeJS.Timeout | undefined;
  const procs: Proc[] = [];

  async function startProc(name: string, count: number, o: { loseEvery?: number; sweep: boolean }): Promise<Proc> {
    const conn = testRedisClient({ maxRetriesPerRequest: null });
    const pool = new FundingPool(conn, { prefix, address: dev.funding.address, partitions: count });
    // What apps/api and apps/worker do at start (refreshed faster here than LAYOUT_REFRESH_MS).
    const layouts = joinPartitionLayouts(conn, prefix, count, pool.partitions.layouts, { everyMs: 200 });
    await layouts.ready;
    const side = composePublicationSide({ prefix, config: { ...config, redisPartitions: count }, pool, logger });
    let n = 0;
    const queue = {
      enqueue: async (txId: string) => {
        // A process that died between its accept and its enqueue: the record waits in its outbox.
        if (o.loseEvery !== undefined && ++n % o.loseEvery === 0) {
          lostEnqueues.add(txId);
          return;
        }
        await side.publication.queue.enqueue(txId);
      },
    };
    const records = side.records(queue);
    side.publication.startPublisher(
      o.sweep ? { concurrency: 4, sweepEveryMs: 200, sweepAfterMs: 500 } : { concurrency: 4, sweepEveryMs: 0 },
    );
    await side.publication.startConfirmations();
    const proc: Proc = {
      name,
      count,
      conn,
      pool,
      side,
      store: records.store,
      writes: records.writes,
      layouts,
      close: async () => {
        layouts.stop();
        await side.close();
        await conn.quit();
      },
    };
    procs.push(proc);
    return proc;
  }

  /** Retries a write refused for want of funding (503 FUNDING_EXHAUSTED: the caller retries after Retry-After). */
  async function write<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await run();
      } catch (err) {
        const code = (err as { errorCode?: string }).errorCode;
        if (code !== 'FUNDING_EXHAUSTED' || attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** `ops` writes by `p`, one at a time: roots (independent and linked creates) and updates of chains no one else is updating. */
  async function load(p: Proc, ops: number, pick: (c: Chain) => boolean = () => true): Promise<void> {
    for (let i = 0; i < ops; i++) {
      const body = Buffer.from(`${p.name}-${i}`);
      const chain = i % 3 === 2 ? chains.find((c) => !c.busy && pick(c)) : undefined;
      if (chain) {
        chain.busy = true;
        try {
          const r = await write(() =>
            p.writes.updateLinked(tenant, chain.head, { body, encode: undefined, updateToken: chain.token }),
          );
          acked.push({ txId: r.txId, chainId: chain.chainId, by: p.name });
          chain.head = r.txId;
          chain.token = r.updateToken;
          chain.updatedBy.push(p.name);
        } finally {
          chain.busy = false;
        }
      } else if (i % 3 === 1) {
        const r = await write(() => p.writes.createLinked(tenant, { body, encode: undefined }));
        acked.push({ txId: r.txId, chainId: r.txId, by: p.name });
        chains.push({
          chainId: r.txId,
          createdBy: p.name,
          head: r.txId,
          token: r.updateToken,
          busy: false,
          updatedBy: [],
        });
      } else {
        const r = await write(() => p.writes.writeIndependent(tenant, { body, encode: undefined }));
        acked.push({ txId: r.txId, chainId: null, by: p.name });
      }
    }
  }

  /** The live partitions as the layouts define them, independently of any registry. */
  const allUnits = [...new Set([...units(OLD), ...units(NEW)])];

  beforeAll(async () => {
    dev = await startArcDevnet({ redis, prefix, partitions: OLD });
    config = loadConfig({
      ...dev.env,
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      LOG_LEVEL: 'silent',
      MAX_UNCONFIRMED_LINKS: '1000',
    });
    // The funding the P = 8 deployment had: every UTXO in a P = 8 shard.
    await dev.fund(300, DENOMINATION);
    // Blocks keep coming: records get proven while writes continue.
    miner = setInterval(() => void dev.node.mineBlock().catch(() => undefined), 500);
  });
  afterAll(async () => {
    if (miner) clearInterval(miner);
    for (const p of procs.splice(0)) await p.close().catch(() => undefined);
    await dev?.close();
    await deleteByPrefix(redis, prefix);
    await redis.quit();
  });

  it('P = 16 processes join while P = 8 ones write; the old ones stop; every record is stored, published and proven once', async () => {
    const a = await startProc('a8', OLD, { loseEvery: 4, sweep: false });
    const b = await startProc('b8', OLD, { loseEvery: 4, sweep: false });
    await Promise.all([load(a, 15), load(b, 15)]);
    expect(a.store.partitions.units).toEqual(units(OLD));

    // P = 16 processes start while the P = 8 ones keep writing.
    const oldLoad = Promise.all([load(a, 15), load(b, 15)]);
    const c = await startProc('c16', NEW, { sweep: true });
    const d = await startProc('d16', NEW, { sweep: true });
    // The new ones know every live partition at once, the old ones within a refresh; roots of
    // each go to its own layout only.
    for (const p of [c, d]) expect(new Set(p.store.partitions.units)).toEqual(new Set(allUnits));
    // Each old process refreshes on its own timer: wait for both, not for one then assert the other.
    for (const p of [a, b]) {
      await eventually(async () => p.pool.partitions.units.length === allUnits.length, 5000, 50);
      expect(new Set(p.store.partitions.units)).toEqual(new Set(allUnits));
    }
    expect(c.store.partitions.own).toEqual(units(NEW));
    // The upkeep's rebalance (as the wallet-upkeep role runs it) funds the new shards from the old.
    expect(await rebalance(c.pool, DENOMINATION)).toBeGreaterThan(0);
    const oldChainsBefore = chains.filter((ch) => ch.createdBy.endsWith('8')).length;
    // The new processes update chains created under P = 8 (and write roots of their own).
    await Promise.all([oldLoad, load(c, 15, (ch) => ch.createdBy.endsWith('8')), load(d, 15)]);
    // Figures an operator reads (back-pressure, /metrics) sum every live partition: one count per
    // partition of either layout, equal to the outboxes' sizes counted key by key.
    const sizes = await c.store.outboxSizes();
    expect(sizes).toHaveLength(allUnits.length);

    // The old processes stop; the new ones keep writing.
    await a.close();
    await b.close();
    procs.splice(procs.indexOf(a), 1);
    procs.splice(procs.indexOf(b), 1);
    await Promise.all([load(c, 12, (ch) => ch.createdBy.endsWith('8')), load(d, 12)]);

    expect(lostEnqueues.size).toBeGreaterThan(0);
    expect(oldChainsBefore).toBeGreaterThan(0);
    const rounds = acked.length;
    expect(rounds).toBe(2 * 15 + 4 * 15 + 2 * 12);

    // Every acknowledged record published and proven (the lost enqueues by the P = 16 sweepers).
    await eventually(
      async () => {
        const metas = await c.store.metaMany(acked.map((r) => r.txId));
        return metas.every((m) => m?.state === 'published');
      },
      90_000,
      250,
    );
    await eventually(
      async () => {
        const proofs = await c.side.chain.reader.inclusions(acked.map((r) => r.txId));
        return proofs.every((p) => p?.proof != null);
      },
      90_000,
      250,
    );

    // Stored exactly once: each txId in exactly one partition of either layout, and the index names it.
    const txIds = acked.map((r) => r.txId);
    expect(new Set(txIds).size).toBe(txIds.length);
    const where = await Promise.all(
      txIds.map(async (txId) => {
        const found = await Promise.all(
          allUnits.map(async (u) => ((await redis.exists(recordsKeys(prefix, u).record(txId))) === 1 ? u : null)),
        );
        return found.filter((u): u is string => u !== null);
      }),
    );
    for (const found of where) expect(found).toHaveLength(1);
    expect(await c.store.partitionsOf(txIds)).toEqual(where.map((f) => f[0]));
    // No other record under the prefix: nothing duplicated, nothing stray.
    const counts = await Promise.all(
      allUnits.map(async (u) => {
        let cursor = '0';
        let n = 0;
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', recordsKeys(prefix, u).record('*'), 'COUNT', 1000);
          cursor = next;
          n += keys.length;
        } while (cursor !== '0');
        return n;
      }),
    ).catch(() => null);
    // SCAN reaches one node of a cluster only: counted where it can count every key.
    if (counts && !(redis as { isCluster?: boolean }).isCluster)
      expect(counts.reduce((x, y) => x + y, 0)).toBe(txIds.length);

    // A chain's versions stayed in its create's partition, whichever layout wrote them; roots of
    // the P = 16 processes went to the new layout (their own shards funded by the rebalance).
    const byTx = new Map(txIds.map((t, i) => [t, where[i]?.[0] as string]));
    for (const r of acked)
      if (r.chainId !== null && r.chainId !== r.txId) expect(byTx.get(r.txId)).toBe(byTx.get(r.chainId));
    const newRoots = acked.filter((r) => r.by.endsWith('16') && (r.chainId === null || r.chainId === r.txId));
    expect(newRoots.filter((r) => units(NEW).includes(byTx.get(r.txId) as string)).length).toBeGreaterThan(
      newRoots.length / 2,
    );
    // Chains created under P = 8 were updated by P = 16 processes and read there, whole and in order.
    const crossed = chains.filter((ch) => ch.createdBy.endsWith('8') && ch.updatedBy.some((w) => w.endsWith('16')));
    expect(crossed.length).toBeGreaterThan(0);
    for (const ch of crossed) {
      expect(units(OLD)).toContain(byTx.get(ch.chainId));
      const versions = acked.filter((r) => r.chainId === ch.chainId).map((r) => r.txId);
      expect(await d.store.meta(ch.head)).toMatchObject({
        txId: ch.head,
        chainId: ch.chainId,
        position: versions.length - 1,
        nextTxId: null,
      });
      expect(await d.store.chain(ch.chainId)).toEqual(versions);
    }

    // Every outbox drained, the old layout's included.
    await eventually(async () => (await c.store.outboxSize()) === 0, 30_000, 200);
    for (const u of allUnits) expect(await redis.zcard(recordsKeys(prefix, u).outbox)).toBe(0);

    // The pool's summed counters agree with its UTXO sets over every shard of both layouts.
    await eventually(async () => (await c.pool.status()).leased.count === 0, 10_000, 100);
    const status = await c.pool.status();
    const free = await c.pool.freeOutpoints();
    expect(status.free.count).toBe(free.size);
    expect(status.free.satoshis).toBe([...free.values()].reduce((x, y) => x + y, 0));
    const perShard = await Promise.all(allUnits.map((u) => redis.zcard(c.pool.keysOf(u).free)));
    expect(status.free.count).toBe(perShard.reduce((x, y) => x + y, 0));
    // Shards of the new layout were funded, and still hold UTXOs the old layout's counters do not count.
    expect(perShard.slice(units(OLD).length).some((n) => n > 0)).toBe(true);
  });
});
