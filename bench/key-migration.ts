/**
 * `npx tsx bench/key-migration.ts`: how long `npm run cli -- redis migrate-keys` stops a deployment.
 * Fills a private redis-server (or BENCH_REDIS_URL) with BENCH_RECORDS (100,000) records in the
 * layout before the hash tags — per record its hash, raw transaction and extended-format
 * transaction, as the records lib stores them — then moves them and prints keys per second.
 */
import { Redis, deleteByPrefix } from '@proofline/shared-redis';
import { migrateKeys, renameFromUntagged } from '../apps/cli/src/key-migration';
import { privateRedis } from './private-redis';

const RECORDS = Number(process.env['BENCH_RECORDS'] ?? 100_000);
const PREFIX = 'bench-migration';

async function main(): Promise<void> {
  const server = await privateRedis();
  const redis = new Redis(server.url);
  try {
    for (let i = 0; i < RECORDS; i += 1000) {
      const pipeline = redis.pipeline();
      for (let j = i; j < Math.min(RECORDS, i + 1000); j += 1) {
        const txId = j.toString(16).padStart(64, '0');
        pipeline.hset(`${PREFIX}:records:rec:${txId}`, 'kind', 'independent', 'state', 'published', 'tenant', 't');
        pipeline.set(`${PREFIX}:records:tx:${txId}`, Buffer.alloc(250, 1));
        pipeline.set(`${PREFIX}:records:ef:${txId}`, Buffer.alloc(60, 2), 'EX', 3600);
      }
      await pipeline.exec();
    }
    const started = process.hrtime.bigint();
    const report = await migrateKeys(redis, PREFIX, renameFromUntagged, { force: true });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    console.log(
      JSON.stringify({
        records: RECORDS,
        keysMoved: report.moved,
        seconds: Number(seconds.toFixed(2)),
        keysPerSecond: Math.round(report.moved / seconds),
        recordsPerSecond: Math.round(RECORDS / seconds),
      }),
    );
  } finally {
    if (process.env['BENCH_REDIS_URL']) await deleteByPrefix(redis, PREFIX);
    redis.disconnect();
    server.stop();
  }
}

void main();
