/**
 * Redis memory per record, load-independent: writes exactly RECORDS independent SHA256 records of
 * 1 KiB through the real write path (transaction builder, funding pool, accept script, txId index,
 * REDIS_PARTITIONS partitions) into a private redis-server, settles them as published, and prints
 * bench/memory-accounting.mjs' table between a snapshot after funding and one after the records.
 * No ARC: proofs (`arc:inc`, block keys) are not in it; `npm run bench:cluster` with
 * MEMORY_ACCOUNTING=1 shows them under load. CLUSTER=1 runs the server with cluster mode on (one
 * node owning every slot), which adds Redis 7.0's per-key slot bookkeeping.
 *
 *   npx tsx bench/record-memory.ts            (RECORDS=10000 REDIS_PARTITIONS=64 CLUSTER=0)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import { FundingPool } from '@proofline/chain-wallet';
import { createRecords } from '@proofline/records-feature';
import { InMemoryChain, fundPool } from '@proofline/records-testing';
import { ManualClock, loadConfig } from '@proofline/shared-config';
import { createRedis } from '@proofline/shared-redis';
import { freePort } from '@proofline/shared-testing';
// @ts-expect-error: a plain ES module of the bench, no types
import { snapshot, table } from './memory-accounting.mjs';

const RECORDS = Number(process.env['RECORDS'] ?? 10_000);
const PARTITIONS = process.env['REDIS_PARTITIONS'] ?? '64';
const CLUSTER = process.env['CLUSTER'] === '1';
const PREFIX = 'proofline';

async function main(): Promise<void> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'record-memory-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  if (CLUSTER) args.push('--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf');
  const server = spawn('redis-server', args, { stdio: 'ignore' });
  try {
    await new Promise((r) => setTimeout(r, 400));
    const node = `127.0.0.1:${port}`;
    const redis = createRedis(`redis://${node}`);
    if (CLUSTER) {
      await redis.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
      for (let i = 0; i < 50 && !/cluster_state:ok/.test(String(await redis.call('CLUSTER', 'INFO'))); i++)
        await new Promise((r) => setTimeout(r, 100));
    }
    const config = loadConfig({
      REDIS_URL: `redis://${node}`,
      REDIS_PREFIX: PREFIX,
      REDIS_PARTITIONS: PARTITIONS,
      LOG_LEVEL: 'silent',
    });
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const pool = new FundingPool(redis, {
      prefix: PREFIX,
      address: 'bench',
      clock,
      partitions: config.redisPartitions,
    });
    const records = createRecords({
      config,
      clock,
      redis,
      prefix: PREFIX,
      builder: new BsvTransactionBuilder(),
      funding: { pool, feeRate: () => 1 },
      reader: new InMemoryChain(),
      queue: { enqueue: async () => undefined },
    });
    await fundPool(pool, RECORDS + 100, 100_000);
    const before = await snapshot([node]);
    const body = Buffer.alloc(1024, 7);
    const txIds: string[] = [];
    for (let i = 0; i < RECORDS; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, RECORDS - i) }, (_, j) =>
          records.writes.writeIndependent(
            { tenant: 'default' },
            { body: Buffer.concat([body, Buffer.from(`${i + j}`)]), encode: 'SHA256' },
          ),
        ),
      );
      txIds.push(...batch.map((r) => r.txId));
    }
    for (let i = 0; i < txIds.length; i += 200)
      await Promise.all(txIds.slice(i, i + 200).map((txId) => records.store.settle(txId, clock.now())));
    const after = await snapshot([node]);
    console.log(
      `record-memory: ${RECORDS} independent SHA256 records of 1 KiB, REDIS_PARTITIONS=${PARTITIONS}, ${CLUSTER ? 'cluster mode (one node)' : 'standalone'}, settled published, no proofs`,
    );
    table(RECORDS, before, after);
    redis.disconnect();
  } finally {
    server.kill('SIGTERM');
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
