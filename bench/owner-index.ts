/**
 * `npx tsx bench/owner-index.ts`: what the tenant block index (chain-arc's owner index) costs where
 * proofs are stored, and what its reads cost. On a private redis-server (or BENCH_REDIS_URL), per
 * round and mode: BENCH_BLOCKS (10) blocks of BENCH_BLOCK_TXS (1,000) proofs of depth 10, stored in
 * batches of 500 (an ARC callback batch), every txId a record of one tenant; without the index
 * (no owner lookup) and with it (the records store's `tenantsOf`, as `createPublication` wires
 * it). Prints, per mode, client CPU and Redis CPU per proof stored and wall time per batch; for the
 * index, the bytes its keys hold per record (`MEMORY USAGE`); and the median time of a `myBlocks`
 * page read (50 blocks) and of a block's records window (50 txIds).
 */
import { Redis } from 'ioredis';
import { ArcProofStore, arcKeys, syntheticBlock } from '@proofline/chain-arc';
import type { VerifiedProof } from '@proofline/chain-arc';
import { RecordStore, recordsKeys } from '@proofline/records-data-access';
import { privateRedis } from './private-redis';

const BLOCKS = Number(process.env['BENCH_BLOCKS'] ?? 10);
const TXS = Number(process.env['BENCH_BLOCK_TXS'] ?? 1000);
const BATCH = 500;
const ROUNDS = 3;

function block(height: number): VerifiedProof[] {
  return syntheticBlock(TXS, height).proofs;
}

async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const value = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return value('used_cpu_user') + value('used_cpu_sys');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const server = await privateRedis();
  const redis = new Redis(server.url);
  const results: Record<string, { client: number[]; server: number[]; wall: number[] }> = {
    without: { client: [], server: [], wall: [] },
    with: { client: [], server: [], wall: [] },
  };
  let bytes = 0;
  let readBlocks: number[] = [];
  let readTxIds: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const)) {
        const prefix = `bench-owner-${round}-${mode}`;
        const store = new ArcProofStore(redis, prefix);
        const records = new RecordStore(redis, prefix);
        if (mode === 'with') store.setOwnerLookup((txIds) => records.tenantsOf(txIds));
        const blocks = Array.from({ length: BLOCKS }, (_, i) => block(100 + i));
        // Each proven txId is a record of tenant acme (the fields the lookup reads).
        const seed = redis.pipeline();
        const acme = { family: 'independent', kind: 'independent', tenant: 'acme' };
        for (const p of blocks.flat()) seed.hset(recordsKeys(prefix).record(p.txId), acme);
        await seed.exec();
        const cpu = process.cpuUsage();
        const redisBefore = await redisCpu(redis);
        const started = performance.now();
        let batches = 0;
        for (const proofs of blocks)
          for (let i = 0; i < proofs.length; i += BATCH) {
            await store.storeProofs(proofs.slice(i, i + BATCH));
            batches++;
          }
        const wall = performance.now() - started;
        const used = process.cpuUsage(cpu);
        const n = BLOCKS * TXS;
        results[mode]!.client.push((used.user + used.system) / n);
        results[mode]!.server.push((((await redisCpu(redis)) - redisBefore) * 1e6) / n);
        results[mode]!.wall.push(wall / batches);
        if (mode === 'with') {
          const k = arcKeys(prefix);
          const keys = [
            k.ownerBlocks('acme'),
            k.ownerTxIds('acme'),
            ...blocks.map((b) => k.blockOwners(b[0]!.blockHash)),
          ];
          let sum = 0;
          for (const key of keys) sum += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
          bytes = sum / n;
          const page: number[] = [];
          const window: number[] = [];
          for (let i = 0; i < 200; i++) {
            let t = performance.now();
            await store.ownerBlocks('acme', { first: 50 });
            page.push(performance.now() - t);
            t = performance.now();
            await store.ownerTxIds('acme', blocks[0]![0]!.blockHash, 500, 550);
            window.push(performance.now() - t);
          }
          readBlocks = page;
          readTxIds = window;
        }
        const doomed = await redis.keys(`${prefix}:*`);
        for (let i = 0; i < doomed.length; i += 1000) await redis.del(...doomed.slice(i, i + 1000));
      }
    }
  } finally {
    await redis.quit();
    server.stop();
  }
  const line = (mode: string) => {
    const r = results[mode]!;
    return `${mode.padEnd(8)} client ${median(r.client).toFixed(1)} µs/proof, redis ${median(r.server).toFixed(1)} µs/proof, ${median(r.wall).toFixed(1)} ms per storeProofs call (≤ ${BATCH} proofs)`;
  };
  process.stdout.write(
    `${BLOCKS} blocks × ${TXS} proofs, ${ROUNDS} rounds, medians\n${line('without')}\n${line('with')}\n` +
      `index memory ${bytes.toFixed(1)} B per record (MEMORY USAGE of the owner's keys and the blocks' owner sets)\n` +
      `myBlocks page of 50: ${median(readBlocks).toFixed(2)} ms; a block's records window of 50: ${median(readTxIds).toFixed(2)} ms\n`,
  );
}

void main();
