/**
 * Pipelines on a slot half migrated (pipeline-ask.ts): on a private three-master cluster (whatever
 * PROOFLINE_TEST_REDIS is: the slot moves between two of its masters, and no other spec's keys
 * are there to meet the migration), some keys of one hash tag are moved to another master and the
 * rest are not; a pipeline, or an auto-pipeline, reading both kinds must read what is stored, not
 * the target's "absent" for keys still on the source.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { connectRedis } from './connection';
import { clusterDeployment } from './topology';
import type { RedisClient } from './connection';
import { slotOf } from './keys';

const ROOT = path.resolve(__dirname, '../../../..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startRedis } = require(path.join(ROOT, 'tools/jest/redis-servers.js')) as {
  startRedis(topology: 'cluster3'): Promise<{ url: string; nodes: string[]; stop(): Promise<void> }>;
};

interface Master {
  readonly redis: Redis;
  readonly port: number;
  readonly id: string;
}

const TAG = '{half-moved}';
const SLOT = slotOf(TAG);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a pipeline on a slot half migrated', () => {
  let stopCluster = async (): Promise<void> => undefined;
  let masters: Master[] = [];
  let source: Master;
  let target: Master;
  const clients: RedisClient[] = [];
  let url = '';
  let nodes: { host: string; port: number }[] = [];

  const client = (autoPipelining: boolean): RedisClient => {
    const c = connectRedis(clusterDeployment(url, nodes), {
      enableAutoPipelining: autoPipelining,
      maxRetriesPerRequest: 3,
    });
    clients.push(c);
    return c;
  };

  /** Moves `keys` of the slot to the target (the slot stays MIGRATING/IMPORTING). */
  const moveKeys = async (...keys: string[]) => {
    await source.redis.migrate('127.0.0.1', target.port, '', 0, 5000, 'KEYS', ...keys);
  };
  /** Moves the slot's remaining keys and hands the slot to the target on every master. */
  const finishMigration = async () => {
    const rest = (await source.redis.cluster('GETKEYSINSLOT', SLOT, 1000)) as string[];
    if (rest.length > 0) await moveKeys(...rest);
    for (const node of [target, source, ...masters.filter((m) => m !== target && m !== source)])
      await node.redis.cluster('SETSLOT', SLOT, 'NODE', target.id);
  };

  beforeAll(async () => {
    const cluster = await startRedis('cluster3');
    stopCluster = cluster.stop;
    url = cluster.url;
    nodes = cluster.nodes.map((n) => ({ host: '127.0.0.1', port: Number(n.slice(n.lastIndexOf(':') + 1)) }));
    masters = await Promise.all(
      nodes.map(async ({ host, port }) => {
        const redis = new Redis(port, host);
        return { redis, port, id: String(await redis.cluster('MYID')) };
      }),
    );
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.disconnect();
    for (const m of masters) m.redis.disconnect();
    await stopCluster();
  });

  // A test that failed half way leaves no slot migrating for the next.
  afterEach(async () => finishMigration());

  beforeEach(async () => {
    // The slot back on one master, with a hash, a string and a list that have not moved.
    const owner = (await masters[0]!.redis.cluster('SLOTS')).find(([from, to]) => SLOT >= from && SLOT <= to)?.[2]?.[2];
    if (!owner) throw new Error(`slot ${SLOT} is not served`);
    source = masters.find((m) => m.id === owner)!;
    target = masters.find((m) => m !== source)!;
    await source.redis.del(`${TAG}moved`, `${TAG}hash`, `${TAG}string`);
    await source.redis.hset(`${TAG}moved`, 'field', 'moved');
    await source.redis.hset(`${TAG}hash`, 'field', 'stays');
    await source.redis.set(`${TAG}string`, 'stays too');
    await target.redis.cluster('SETSLOT', SLOT, 'IMPORTING', source.id);
    await source.redis.cluster('SETSLOT', SLOT, 'MIGRATING', target.id);
  });

  it('reads keys still on the source as stored while another key of the pipeline has moved', async () => {
    const redis = client(false);
    await moveKeys(`${TAG}moved`);
    const finished = sleep(300).then(finishMigration);
    const replies = await redis
      .pipeline()
      .hget(`${TAG}hash`, 'field')
      .hget(`${TAG}moved`, 'field')
      .get(`${TAG}string`)
      .exec();
    await finished;
    expect(replies).toEqual([
      [null, 'stays'],
      [null, 'moved'],
      [null, 'stays too'],
    ]);
  });

  it('reads a key still on the source beside an absent one (ASK from the source) as stored', async () => {
    const redis = client(false);
    const finished = sleep(300).then(finishMigration);
    const replies = await redis.pipeline().hget(`${TAG}hash`, 'field').get(`${TAG}absent`).exec();
    await finished;
    expect(replies).toEqual([
      [null, 'stays'],
      [null, null],
    ]);
  });

  it('auto-pipelined reads of moved and unmoved keys each read what is stored', async () => {
    const redis = client(true);
    await moveKeys(`${TAG}moved`);
    const finished = sleep(300).then(finishMigration);
    const replies = await Promise.all([
      redis.hget(`${TAG}hash`, 'field'),
      redis.hget(`${TAG}moved`, 'field'),
      redis.get(`${TAG}string`),
    ]);
    await finished;
    expect(replies).toEqual(['stays', 'moved', 'stays too']);
  });

  it('a pipeline all of whose keys have moved is read on the target (ASK), the slot still migrating', async () => {
    const redis = client(false);
    await moveKeys(`${TAG}moved`, `${TAG}hash`);
    const replies = await redis.pipeline().hget(`${TAG}hash`, 'field').hget(`${TAG}moved`, 'field').exec();
    expect(replies).toEqual([
      [null, 'stays'],
      [null, 'moved'],
    ]);
    await finishMigration();
  });

  it('a pipeline with a write fails its ASKed commands as retryable (TRYAGAIN), never reading the target', async () => {
    const redis = client(false);
    await moveKeys(`${TAG}moved`);
    const replies = (await redis.pipeline().set(`${TAG}string`, 'written').hget(`${TAG}moved`, 'field').exec())!;
    expect(replies[0]).toEqual([null, 'OK']);
    expect(replies[1]![0]?.message).toMatch(/^TRYAGAIN /);
    await finishMigration();
  });
});
