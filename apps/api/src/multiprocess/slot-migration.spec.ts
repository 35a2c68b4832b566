/**
 * Resharding a live three-master cluster (issue 22's rule): two API processes and a worker
 * process (started exactly as `npm start` starts them, REDIS_PARTITIONS=8) keep writing
 * independent records and concurrent updates of chains that live in one partition while the
 * spec moves that partition's slot, and the slot of a txId index bucket, to another master the
 * way `redis-cli --cluster reshard` does: `CLUSTER SETSLOT IMPORTING/MIGRATING`, `MIGRATE` in
 * small batches with pauses (writes meet the slot half moved: multi-key scripts get TRYAGAIN,
 * single keys ASK), then `CLUSTER SETSLOT NODE` on every master (clients get MOVED).
 *  - every write answered 2xx is stored and proven; no chain holds a record twice and each round
 *    of concurrent updates of a chain's end has at most one winner;
 *  - the only 5xx are 503 REDIS_UNAVAILABLE with Retry-After (counted, printed);
 *  - the outboxes drain, nothing stays leased, and the moved keys live on the target master.
 * The slot moves in a private three-master cluster started here: the suite's shared cluster
 * serves other spec files at the same time (their keys share the partitions' slots, the tags
 * carry no prefix), and they must not meet a migration.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import { startArcDevnet } from '@proofline/devnet-testing';
import type { ArcDevnet } from '@proofline/devnet-testing';
import { generateRawKey } from '@proofline/identity-domain';
import { eventually, freePort, uniquePrefix } from '@proofline/shared-testing';
import { RecordStore } from '@proofline/records-data-access';
import { SpawnedApps } from '../testing/spawned-apps';
import {
  clusterDeployment,
  connectRedis,
  deleteByPrefix,
  partitionUnit,
  slotOf,
  txIndexUnit,
} from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';

const ROOT = path.resolve(__dirname, '../../../..');
const PARTITIONS = 8;
/** Keys per MIGRATE and the pause between batches: the slot stays half moved for a while. */
const BATCH = 4;
const PAUSE_MS = 40;
/** Chains updated concurrently, and concurrent updates of a chain's end per round. */
const CHAINS = 4;
const RACERS = 3;
const INDEPENDENT_WRITERS = 4;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startRedis } = require(path.join(ROOT, 'tools/jest/redis-servers.js')) as {
  startRedis(topology: 'cluster3'): Promise<{ url: string; nodes: string[]; stop(): Promise<void> }>;
};

const onThreeMasters = process.env['PROOFLINE_TEST_REDIS_TOPOLOGY'] === 'cluster3';

interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly body: { txId?: string; errorCode?: string; txIds?: string[] };
}

/** One master of the private cluster, by a direct connection. */
interface Master {
  readonly redis: Redis;
  readonly host: string;
  readonly port: number;
  readonly id: string;
}

/**
 * `INFO errorstats` of every master, summed: how often the servers answered TRYAGAIN, ASK and
 * MOVED. (Its ERR count is left out: every new ioredis connection, e.g. each slot map refresh
 * after a MOVED, sends CLIENT SETINFO, which Redis 7.0 does not know.)
 */
async function redirections(all: readonly Master[]): Promise<Record<string, number>> {
  const out: Record<string, number> = { TRYAGAIN: 0, ASK: 0, MOVED: 0 };
  for (const m of all)
    for (const [, name, count] of (await m.redis.info('errorstats')).matchAll(/errorstat_(\w+):count=(\d+)/g))
      if (name! in out) out[name!] = (out[name!] ?? 0) + Number(count);
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The master that serves `slot` (CLUSTER SLOTS as `node` sees it). */
async function ownerOf(node: Redis, slot: number): Promise<string> {
  const range = (await node.cluster('SLOTS')).find(([from, to]) => slot >= from && slot <= to);
  const owner = range?.[2]?.[2];
  if (!owner) throw new Error(`slot ${slot} is not served`);
  return owner;
}

/**
 * Moves `slot` from `source` to `target` as `redis-cli --cluster reshard` does, in batches of
 * {@link BATCH} keys with {@link PAUSE_MS} between them; resolves with the keys moved.
 */
async function migrateSlot(slot: number, source: Master, target: Master, all: readonly Master[]): Promise<number> {
  await target.redis.cluster('SETSLOT', slot, 'IMPORTING', source.id);
  await source.redis.cluster('SETSLOT', slot, 'MIGRATING', target.id);
  let moved = 0;
  for (;;) {
    const keys = (await source.redis.cluster('GETKEYSINSLOT', slot, BATCH)) as string[];
    if (keys.length === 0) break;
    // An IOERR (the target did not answer in time on a loaded machine; seen three times in a row
    // with four busy loops on two cores) may leave a key on both sides: the source still serves
    // it, and MIGRATE again with REPLACE overwrites the copy.
    for (let attempt = 1; ; attempt += 1) {
      const replace = attempt > 1 ? ['REPLACE'] : [];
      const done = await source.redis
        .migrate(target.host, target.port, '', 0, 5000, ...replace, 'KEYS', ...keys)
        .then(() => true)
        .catch((e: Error) => {
          if (attempt >= 10 || !e.message.startsWith('IOERR')) throw e;
          return false;
        });
      if (!done) await sleep(PAUSE_MS);
      if (done) break;
    }
    moved += keys.length;
    await sleep(PAUSE_MS);
  }
  // The target first (it stops asking for ASKING), then the source (MOVED from now on), then the rest.
  for (const node of [target, source, ...all.filter((n) => n !== target && n !== source)])
    await node.redis.cluster('SETSLOT', slot, 'NODE', target.id);
  return moved;
}

(onThreeMasters ? describe : describe.skip)('a busy partition resharded during writes (three masters)', () => {
  const prefix = uniquePrefix('reshard');
  const bootstrap = generateRawKey();
  const bases: string[] = [];
  let stopCluster = async (): Promise<void> => undefined;
  let redis: RedisClient;
  let records: RecordStore;
  let masters: Master[] = [];
  let dev: ArcDevnet;
  const octet = { 'x-api-key': bootstrap, 'content-type': 'application/octet-stream' };

  let redisEnv: Record<string, string> = {};
  const apps = new SpawnedApps(() => ({
    ...redisEnv,
    REDIS_PREFIX: prefix,
    REDIS_PARTITIONS: String(PARTITIONS),
    LOG_LEVEL: 'silent',
    BOOTSTRAP_API_KEY: bootstrap,
    API_PROCESSES: '1',
    // The spec funds the pool itself: no upkeep splits meanwhile.
    POOL_LOW_WATER: '0',
    POOL_TARGET: '1',
    ...dev.env,
  }));
  const start = (entry: string, env: Record<string, string>) => apps.start(entry, env);

  const post = async (url: string, body: string): Promise<Answer> => {
    const r = await fetch(url, { method: 'POST', headers: octet, body });
    return {
      status: r.status,
      retryAfter: r.headers.get('retry-after'),
      body: (await r.json()) as Answer['body'],
    };
  };

  beforeAll(async () => {
    const cluster = await startRedis('cluster3');
    stopCluster = cluster.stop;
    const nodes = cluster.nodes.map((n) => ({ host: '127.0.0.1', port: Number(n.slice(n.lastIndexOf(':') + 1)) }));
    redis = connectRedis(clusterDeployment(cluster.url, nodes), {
      maxRetriesPerRequest: 3,
      enableAutoPipelining: false,
    });
    records = new RecordStore(redis, prefix, { partitions: PARTITIONS });
    masters = await Promise.all(
      nodes.map(async ({ host, port }) => {
        const node = new Redis(port, host);
        return { redis: node, host, port, id: String(await node.cluster('MYID')) };
      }),
    );
    dev = await startArcDevnet({ redis, prefix, blockIntervalMs: 500, partitions: PARTITIONS });
    await dev.fund(640, 1000);
    redisEnv = { REDIS_URL: cluster.url, REDIS_CLUSTER_NODES: cluster.nodes.join(',') };
    for (let i = 0; i < 2; i += 1) {
      const port = await freePort();
      start('apps/api/src/main.ts', { PORT: String(port), HOST: '127.0.0.1' });
      bases.push(`http://127.0.0.1:${port}`);
    }
    start('apps/worker/src/main.ts', {});
    await apps.ready(bases);
  }, 120_000);

  afterAll(async () => {
    await apps.stop();
    await dev?.close();
    if (redis) {
      await deleteByPrefix(redis, prefix);
      await redis.quit();
    }
    for (const m of masters) m.redis.disconnect();
    await stopCluster();
  }, 30_000);

  it('moves the slot of a busy partition and of an index bucket while writes run: nothing lost, nothing twice', async () => {
    // Chains whose records live in the partition to move: linked creates go round robin over
    // the partitions, so create some and keep those that landed there.
    const moving = partitionUnit(0, PARTITIONS);
    const chains: string[] = [];
    for (let i = 0; chains.length < CHAINS; i += 1) {
      if (i > 20 * PARTITIONS) throw new Error(`no ${CHAINS} chains landed in partition ${moving}`);
      const created = await post(`${bases[i % 2]}/api/v1/linkedrecords`, `chain-${i}`);
      expect(created.status).toBe(200);
      const txId = created.body.txId as string;
      if ((await records.partitionOf(txId)) === moving) chains.push(txId);
    }
    const slot = slotOf(`{${moving}}`);
    const sourceId = await ownerOf(masters[0]!.redis, slot);
    const source = masters.find((m) => m.id === sourceId)!;
    const target = masters.find((m) => m !== source)!;
    // The index bucket of the first chain's records too, to another master: index entries are
    // single keys (ASK, no TRYAGAIN), read and written before and after every accept.
    const bucketSlot = slotOf(`{${txIndexUnit(chains[0]!)}}`);
    const bucketSourceId = await ownerOf(masters[0]!.redis, bucketSlot);
    const bucketSource = masters.find((m) => m.id === bucketSourceId)!;
    const bucketTarget =
      masters.find((m) => m !== bucketSource && m !== target) ?? masters.find((m) => m !== bucketSource)!;

    const answers: { what: string; answer: Answer }[] = [];
    /** txId of every 200 → the path its status is read under. */
    const acknowledged = new Map<string, string>(chains.map((c) => [c, 'linkedrecords']));
    const note = (what: 'record' | 'update', answer: Answer) => {
      answers.push({ what, answer });
      if (answer.status === 200 && answer.body.txId) {
        expect(acknowledged.has(answer.body.txId)).toBe(false);
        acknowledged.set(answer.body.txId, what === 'record' ? 'records' : 'linkedrecords');
      }
      return answer;
    };
    let writing = true;
    /** Per chain, the rounds of concurrent updates of its end: each round's answers. */
    const rounds = new Map<string, Answer[][]>(chains.map((c) => [c, []]));

    const independent = async (w: number) => {
      for (let n = 0; writing; n += 1)
        note('record', await post(`${bases[(w + n) % 2]}/api/v1/records`, `r-${w}-${n}`));
    };
    const updater = async (chainId: string) => {
      let end = chainId;
      while (writing) {
        const round = await Promise.all(
          Array.from({ length: RACERS }, async (_, i) =>
            note('update', await post(`${bases[i % 2]}/api/v1/linkedrecords/${end}/update`, `u-${i}`)),
          ),
        );
        rounds.get(chainId)!.push(round);
        // The end as stored (a 503 may hide an update that was applied after all).
        const chain = await eventually(async () => (await records.chain(chainId).catch(() => null)) ?? undefined);
        end = chain[chain.length - 1] ?? chainId;
      }
    };

    const load = [
      ...Array.from({ length: INDEPENDENT_WRITERS }, (_, w) => independent(w)),
      ...chains.map((c) => updater(c)),
    ];
    // The cluster is this spec's own: its statistics count this load only.
    for (const m of masters) await m.redis.config('RESETSTAT');
    const began = Date.now();
    let moved = 0;
    let bucketMoved = 0;
    let migratedIn = 0;
    try {
      await sleep(500);
      [moved, bucketMoved] = await Promise.all([
        migrateSlot(slot, source, target, masters),
        bucketSlot === slot ? Promise.resolve(0) : migrateSlot(bucketSlot, bucketSource, bucketTarget, masters),
      ]);
      migratedIn = Date.now() - began - 500;
      await sleep(500);
    } finally {
      writing = false;
      await Promise.allSettled(load);
    }
    await Promise.all(load);

    const errors = await redirections(masters);
    const by = (s: number) => answers.filter((a) => a.answer.status === s);
    const unavailable = by(503);
    console.info(
      `resharding: ${moved} keys of {${moving}} (slot ${slot}) and ${bucketMoved} of the index bucket moved in ` +
        `${migratedIn} ms under ${answers.length} writes: ${by(200).length} 200, ${by(409).length} 409, ` +
        `${unavailable.length} 503 (${[...new Set(unavailable.map((a) => `${a.what} ${a.answer.body.errorCode}`))].join(', ')}); ` +
        `the masters answered ${JSON.stringify(errors)}`,
    );
    expect(moved).toBeGreaterThan(0);
    // Writes met the slot half moved: the servers refused scripts with TRYAGAIN and redirected with ASK.
    expect(errors['TRYAGAIN'] ?? 0).toBeGreaterThan(0);
    expect(errors['ASK'] ?? 0).toBeGreaterThan(0);

    // Only the documented retryable 5xx, and nothing but what the write path answers.
    for (const { answer } of answers) {
      expect([200, 409, 503]).toContain(answer.status);
      if (answer.status === 503) {
        expect(answer.body.errorCode).toBe('REDIS_UNAVAILABLE');
        expect(answer.retryAfter).toBe('1');
      }
      if (answer.status === 409) expect(answer.body.errorCode).toBe('NOT_LINKED_RECORDS_END');
    }

    // The slot and its keys are on the target now, as every master sees it.
    for (const m of masters) expect(await ownerOf(m.redis, slot)).toBe(target.id);
    expect(Number(await source.redis.cluster('COUNTKEYSINSLOT', slot))).toBe(0);
    expect(Number(await target.redis.cluster('COUNTKEYSINSLOT', slot))).toBeGreaterThan(0);
    expect(await target.redis.exists(records.keysOf(moving).chain(chains[0]!))).toBe(1);
    if (bucketSlot !== slot) for (const m of masters) expect(await ownerOf(m.redis, bucketSlot)).toBe(bucketTarget.id);

    // Chains: no record twice, each link where its neighbours say, every winner in its chain,
    // at most one winner a round and a round with none only when one of its answers was a 503.
    for (const chainId of chains) {
      const chain = await records.chain(chainId);
      expect(chain[0]).toBe(chainId);
      expect(new Set(chain).size).toBe(chain.length);
      const metas = await records.metaMany(chain);
      metas.forEach((meta, i) => {
        expect(meta).not.toBeNull();
        expect(meta?.nextTxId ?? null).toBe(chain[i + 1] ?? null);
      });
      const chainRounds = rounds.get(chainId)!;
      let winners = 0;
      for (const [i, round] of chainRounds.entries()) {
        const won = round.filter((a) => a.status === 200);
        expect(won.length).toBeLessThanOrEqual(1);
        // No winner: a 503 in this round, or in the one before, was an update that did apply (a
        // script sent before its timeout ran after it) and moved the end past the one raced on.
        if (won.length === 0)
          expect([...round, ...(chainRounds[i - 1] ?? [])].some((a) => a.status === 503)).toBe(true);
        if (won[0]) expect(chain).toContain(won[0].body.txId);
        winners += won.length;
      }
      expect(chain.length - 1).toBeGreaterThanOrEqual(winners);
      expect(chain.length - 1).toBeLessThanOrEqual(chainRounds.length);
    }

    // Every acknowledged write is stored, published and proven in a block the node mined.
    const all = [...acknowledged.keys()];
    expect((await records.metaMany(all)).every((m) => m !== null)).toBe(true);
    const unconfirmed = async (): Promise<string[]> => {
      const states = await Promise.all(
        all.map(async (txId) => {
          const r = await fetch(`${bases[0]}/api/v1/${acknowledged.get(txId)}/${txId}/status`, { headers: octet });
          return r.status === 200
            ? ((await r.json()) as { confirmation: { blockHash: string } | null }).confirmation
            : null;
        }),
      );
      return all.filter((_, i) => states[i] === null);
    };
    // Where each record still unconfirmed stands (printed when it is late, and in a failure): its
    // state, its outbox entry's due time and publish job, and the same of its previous record
    // (an update whose 503 was applied after all, or one proven but not settled).
    const publishQueue = new Queue(QUEUES.recordsPublish, {
      connection: redis,
      prefix: bullPrefix(prefix, QUEUES.recordsPublish),
    });
    const whereIs = async (txId: string, now: number): Promise<string> => {
      const unit = await records.partitionOf(txId);
      if (!unit) return `${txId.slice(0, 12)}: no partition`;
      const [meta, due, job] = await Promise.all([
        records.meta(txId),
        redis.zscore(records.keysOf(unit).outbox, txId),
        publishQueue.getJobState(txId),
      ]);
      const outbox = due === null ? 'none' : `due in ${Number(due) - now} ms`;
      const failure = meta?.failure ? ` (${meta.failure})` : '';
      return `${txId.slice(0, 12)} in ${unit}: ${meta?.state}${failure}, outbox ${outbox}, job ${job}, previous ${meta?.prevTxId?.slice(0, 12) ?? '-'}`;
    };
    const unconfirmedNow = async (): Promise<string> => {
      const now = Date.now();
      const late = (await unconfirmed()).slice(0, 20);
      const previous = (await records.metaMany(late))
        .map((m) => m?.prevTxId)
        .filter((p): p is string => !!p && !late.includes(p));
      return (await Promise.all([...late, ...new Set(previous)].map((t) => whereIs(t, now)))).join('\n');
    };
    const confirmingFrom = Date.now();
    const lateNote = setTimeout(
      () =>
        void unconfirmedNow()
          .then((where) => console.info(`unconfirmed after 20 s:\n${where}`))
          .catch(() => undefined),
      20_000,
    );
    await eventually(
      async () => (await unconfirmed()).length === 0,
      // The moved partition's chains publish one link after another, and a publish job that met
      // the half-moved slot is retried with backoff: 0.5-7 s after the writes stop on a loaded
      // machine. A record a publisher loses track of waits for the outbox sweeper, SWEEP_DEFER_MS
      // (60 s) after its batch: a pipeline that read the half-moved slot's keys as absent (until
      // pipeline-ask.ts), a failed batch or chain follow (until handOverFailedBatch and
      // leaveToSweeper). One race is left (the producer's deferral of a batch written after a
      // worker ran it; records-publication README, "After a fault"): about 1 run in 50 with three
      // copies of this spec at once, proven 45-65 s after the writes stopped. The 20 s note above
      // shows every such case; the bound fails a record that is never published.
      75_000,
      250,
    )
      .catch(async (e: Error) => {
        throw new Error(`${e.message}; unconfirmed:\n${await unconfirmedNow()}`);
      })
      .finally(async () => {
        clearTimeout(lateNote);
        await publishQueue.close();
      });
    console.info(`every acknowledged record confirmed ${Date.now() - confirmingFrom} ms after the writes stopped`);
    // The outboxes drained (no record left in one, so none was there twice) and no funding is left leased.
    await eventually(async () => (await records.outboxSizes()).every((n) => n === 0), 10_000, 100);
    expect((await dev.pool.status()).leased.count).toBe(0);
  }, 150_000);
});

if (!onThreeMasters)
  it.skip('a busy partition resharded during writes: runs only with PROOFLINE_TEST_REDIS=cluster3 (it needs three masters to move a slot between)', () =>
    undefined);
