import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { arcKeys, legacyArcKeys } from '@proofline/chain-arc';
import { walletKeys } from '@proofline/chain-wallet';
import { identityKeys } from '@proofline/identity-data-access';
import { recordsKeys } from '@proofline/records-data-access';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import { Cluster, Redis, deleteByPrefix, sharedKeys } from '@proofline/shared-redis';
import { testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { webhooksKeys } from '@proofline/webhooks-data-access';
import { migrateKeys, renameFromUntagged } from './key-migration';

const ROOT = path.resolve(__dirname, '../../..');
const TX = 'ef974e5f95ba9b750fcd75d8e6b5615b9cce136fa890cec59013e94c41e423db';
const BLOCK = '271f5283a4d6c2b0e4f7c1d9a8b3e5f60718293a4b5c6d7e8f9011223344bc61';
const KEY_ID = '0f8b2c1e-6d3a-4b5c-9e7f-112233445566';

/**
 * Key names a deployment from before the hash tags held, as `npm start` wrote them under the
 * prefix `proofline` (read with SCAN after a session of writes, keys, webhooks and blocks; ids
 * replaced by the constants above), each with the name today's code gives the same data.
 */
function layouts(prefix: string): Array<[old: string, today: string]> {
  const rec = recordsKeys(prefix);
  const wallet = walletKeys(prefix);
  const arc = arcKeys(prefix);
  const legacyArc = legacyArcKeys(prefix);
  const idty = identityKeys(prefix);
  const wh = webhooksKeys(prefix);
  const proc = sharedKeys(prefix);
  const bull = (queue: string) => `${bullPrefix(prefix, queue as (typeof QUEUES)[keyof typeof QUEUES])}:${queue}`;
  return [
    [`${prefix}:records:rec:${TX}`, rec.record(TX)],
    [`${prefix}:records:tx:${TX}`, rec.tx(TX)],
    [`${prefix}:records:ef:${TX}`, rec.ef(TX)],
    [`${prefix}:records:chain:${TX}`, rec.chain(TX)],
    [`${prefix}:records:outbox`, rec.outbox],
    [`${prefix}:wallet:free`, wallet.free],
    [`${prefix}:wallet:counters`, wallet.counters],
    [`${prefix}:wallet:tx:${TX}`, wallet.tx(TX)],
    // Renamed into {arc} first; shard-migration.ts then splits them into the txId shards.
    [`${prefix}:arc:inc`, legacyArc.inclusions],
    [`${prefix}:arc:blocks`, arc.blocks],
    [`${prefix}:arc:tip`, arc.tip],
    [`${prefix}:arc:block:${BLOCK}`, `${legacyArc.blockTxIdsPrefix}${BLOCK}`],
    [`${prefix}:identity:key:${KEY_ID}`, idty.keyEntity(KEY_ID)],
    [`${prefix}:identity:key-by-hash`, idty.keyByHash],
    [`${prefix}:identity:tenant:default:keys`, idty.tenantKeys('default')],
    // Renamed into {wh} first; shard-migration.ts then splits it into the txId shards.
    [`${prefix}:webhooks:watch`, wh.legacyWatch],
    [`${prefix}:webhooks:tenant:default`, wh.tenant('default')],
    [`${prefix}:workers:heartbeats`, proc.workerHeartbeats],
    [`${prefix}:auth:dev-jwt-secret`, proc.devJwtSecret],
    [`${prefix}:bull:records-publish:meta`, `${bull(QUEUES.recordsPublish)}:meta`],
    [
      `${prefix}:bull:chain-confirmations:repeat:arc-confirmations:1764163000000`,
      `${bull(QUEUES.chainConfirmations)}:repeat:arc-confirmations:1764163000000`,
    ],
    [`${prefix}:bull:webhooks-watch:events`, `${bull(QUEUES.webhooksWatch)}:events`],
    // apps/api and the devnet node are not importable here: their names are spelled out.
    [`${prefix}:idempotency:default:${TX}`, `${prefix}:{idem:default}:idempotency:default:${TX}`],
    [`${prefix}:devnet:chain:tip`, `${prefix}:{devnet}:chain:tip`],
    [`${prefix}:devnet:chain:raw`, `${prefix}:{devnet}:chain:raw`],
  ];
}

// The move runs on the standalone Redis that holds the old layout: when the suite runs on a
// cluster, this spec starts a standalone server of its own.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startRedis } = require(path.join(ROOT, 'tools/jest/redis-servers.js')) as {
  startRedis(topology: 'standalone'): Promise<{ url: string; stop(): Promise<void> }>;
};

describe('redis migrate-keys: the layout before hash tags to today', () => {
  const prefix = uniquePrefix('mig');
  let redis: Redis;
  let url: string;
  let stop = async (): Promise<void> => undefined;
  beforeAll(async () => {
    url = testRedisUrl();
    if ((process.env['PROOFLINE_TEST_REDIS_TOPOLOGY'] ?? 'standalone') !== 'standalone') {
      const own = await startRedis('standalone');
      url = own.url;
      stop = own.stop;
    }
    redis = new Redis(url);
  });
  afterAll(async () => {
    await deleteByPrefix(redis, prefix);
    await redis.quit();
    await stop();
  });

  it('moves every old name to the name today code reads, keeping values and TTLs', async () => {
    const p = `${prefix}-a`;
    const pairs = layouts(p);
    // Values of several types, as the deployment had them; a TTL must survive the move.
    const recordHash = `${p}:records:rec:${TX}`;
    for (const [old] of pairs) if (old !== recordHash) await redis.set(old, `value of ${old}`);
    await redis.hset(recordHash, 'state', 'published');
    await redis.pexpire(`${p}:records:ef:${TX}`, 600_000);
    await redis.set(`${p}:ratelimit:key:${KEY_ID}`, '3', 'PX', 60_000);
    await redis.set(`${p}:something-else`, 'x');

    const report = await migrateKeys(redis, p, renameFromUntagged, { now: Date.now() });
    expect(report.moved).toBe(pairs.length);
    expect(report.leftToExpire).toBe(1);
    expect(report.unknown).toEqual([`${p}:something-else`]);
    expect(report.conflicts).toEqual([]);
    expect(report.byUnit).toMatchObject({ rec: 8, arc: 4, idty: 3, wh: 2, proc: 2, bull: 3, idem: 1, devnet: 2 });
    for (const [old, today] of pairs) {
      expect(await redis.exists(old)).toBe(0);
      expect(await redis.exists(today)).toBe(1);
    }
    expect(await redis.hget(recordsKeys(p).record(TX), 'state')).toBe('published');
    expect(await redis.pttl(recordsKeys(p).ef(TX))).toBeGreaterThan(500_000);
    expect(await redis.get(arcKeys(p).tip)).toBe(`value of ${p}:arc:tip`);

    // Idempotent: a second run finds everything moved and changes nothing.
    const again = await migrateKeys(redis, p, renameFromUntagged);
    expect(again).toMatchObject({ moved: 0, alreadyMoved: pairs.length, conflicts: [] });
  });

  it('never overwrites a key of the new layout, and refuses while a worker beats', async () => {
    const p = `${prefix}-b`;
    await redis.set(`${p}:arc:tip`, 'old');
    await redis.set(arcKeys(p).tip, 'new');
    const report = await migrateKeys(redis, p, renameFromUntagged, { force: true });
    expect(report.conflicts).toEqual([`${p}:arc:tip`]);
    expect(await redis.get(arcKeys(p).tip)).toBe('new');
    expect(await redis.get(`${p}:arc:tip`)).toBe('old');

    await redis.zadd(`${p}:workers:heartbeats`, Date.now() - 2000, 'vm-1-abc');
    await expect(migrateKeys(redis, p, renameFromUntagged)).rejects.toThrow(/stop the service/);
    await redis.zadd(`${p}:workers:heartbeats`, Date.now() - 120_000, 'vm-1-abc');
    await expect(migrateKeys(redis, p, renameFromUntagged, { force: true })).resolves.toMatchObject({ moved: 1 });
  });

  it('runs as the CLI: a dry run changes nothing, then the move', async () => {
    const p = `${prefix}-c`;
    await redis.set(`${p}:records:tx:${TX}`, 'raw');
    const cli = (args: string[]) =>
      spawnSync(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT, 'apps/cli/src/main.ts'), 'redis', 'migrate-keys', ...args],
        {
          cwd: ROOT,
          env: { ...process.env, REDIS_URL: url, REDIS_PREFIX: p, LOG_LEVEL: 'silent' },
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
    const dry = cli(['--dry-run']);
    expect(dry.status).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, moved: 1 });
    expect(await redis.exists(`${p}:records:tx:${TX}`)).toBe(1);
    const run = cli([]);
    expect(run.status).toBe(0);
    // Then the partition step (REDIS_PARTITIONS unset on one Redis with no layout: 1): no record hash, so nothing to move.
    expect(JSON.parse(run.stdout)).toMatchObject({
      dryRun: false,
      moved: 1,
      byUnit: { rec: 1 },
      partitioned: { partitions: 1, records: 0 },
    });
    expect(await redis.get(recordsKeys(p).tx(TX))).toBe('raw');
  });

  it('refuses a cluster client: the move happens on the standalone Redis before the import', async () => {
    const cluster = new Cluster([url], { lazyConnect: true });
    await expect(migrateKeys(cluster, prefix, renameFromUntagged)).rejects.toThrow(/standalone Redis/);
    cluster.disconnect();
  });
});
