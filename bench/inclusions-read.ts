/**
 * `npx tsx bench/inclusions-read.ts`: what `ArcProofStore.inclusions` costs (the read behind
 * status, receipts, GraphQL confirmations and the webhook watcher). On a private redis-server (or
 * BENCH_REDIS_URL): BENCH_BLOCKS (4) blocks of BENCH_BLOCK_TXS (1,000) proofs (depth 10: 4 levels
 * inline, 6 in the block's shared top) are stored; then, for reads of 1, 50 and 500 txIds spread
 * over those blocks, BENCH_READS (300) reads each: median and p95 wall time per read, client CPU
 * and Redis CPU per read, and Redis commands per read (`INFO commandstats`).
 */
import { Redis } from 'ioredis';
import { ArcProofStore, syntheticBlock } from '@proofline/chain-arc';
import { privateRedis } from './private-redis';

const BLOCKS = Number(process.env['BENCH_BLOCKS'] ?? 4);
const TXS = Number(process.env['BENCH_BLOCK_TXS'] ?? 1000);
const READS = Number(process.env['BENCH_READS'] ?? 300);

async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const value = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return value('used_cpu_user') + value('used_cpu_sys');
}

async function redisCalls(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) if (m[1] !== 'info') calls += Number(m[2]);
  return calls;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

async function main(): Promise<void> {
  const server = await privateRedis();
  const redis = new Redis(server.url, { enableAutoPipelining: false });
  const probe = new Redis(server.url);
  const prefix = `bench-inclusions-${process.pid}`;
  try {
    const store = new ArcProofStore(redis, prefix);
    const txIds: string[] = [];
    for (let b = 0; b < BLOCKS; b++) {
      const proofs = syntheticBlock(TXS, 800 + b).proofs;
      for (let i = 0; i < proofs.length; i += 500) await store.storeProofs(proofs.slice(i, i + 500));
      txIds.push(...proofs.map((p) => p.txId));
    }
    console.log(`${BLOCKS} blocks of ${TXS} proofs stored; ${READS} reads per size`);
    for (const size of [1, 50, 500]) {
      const asks = Array.from({ length: READS }, (_, r) =>
        Array.from({ length: size }, (_, i) => txIds[(r * 7919 + i * 104_729) % txIds.length] as string),
      );
      await store.inclusions(asks[0] as string[]); // scripts loaded, connection warm
      const times: number[] = [];
      const cpu0 = process.cpuUsage();
      const redisCpu0 = await redisCpu(probe);
      const calls0 = await redisCalls(probe);
      for (const ask of asks) {
        const t0 = process.hrtime.bigint();
        const got = await store.inclusions(ask);
        times.push(Number(process.hrtime.bigint() - t0) / 1e3);
        if (got.some((inc) => inc === null)) throw new Error('a stored proof read as missing');
      }
      const calls = (await redisCalls(probe)) - calls0 - 1; // the INFO cpu in between
      const redisUs = ((await redisCpu(probe)) - redisCpu0) * 1e6;
      const cpu = process.cpuUsage(cpu0);
      times.sort((a, b) => a - b);
      console.log(
        `${String(size).padStart(3)} txIds: median ${quantile(times, 0.5).toFixed(0)} µs, p95 ${quantile(times, 0.95).toFixed(0)} µs; ` +
          `client CPU ${((cpu.user + cpu.system) / READS).toFixed(0)} µs, Redis CPU ${(redisUs / READS).toFixed(0)} µs, ` +
          `${(calls / READS).toFixed(1)} Redis commands per read`,
      );
    }
  } finally {
    const keys = await probe.keys(`${prefix}:*`);
    for (const key of keys) await probe.unlink(key);
    redis.disconnect();
    probe.disconnect();
    server.stop();
  }
}

void main();
