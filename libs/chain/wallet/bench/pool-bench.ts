/**
 * Funding pool throughput: N concurrent writers each doing reserve → commit (with change) →
 * confirm, over C connections. Prints ops/s. Usage:
 *   REDIS_URL=redis://127.0.0.1:6399 npx tsx libs/chain/wallet/bench/pool-bench.ts [writes=20000] [connections=4] [concurrency=200]
 * Uses its own key prefix and deletes it afterwards.
 */
import { randomBytes } from 'node:crypto';
import { deleteByPrefix, openRedis } from '@proofline/shared-redis';
import { FundingPool } from '../src';

async function main(): Promise<void> {
  const [writes = 20000, connections = 4, concurrency = 200] = process.argv.slice(2).map(Number);
  const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  const prefix = `bench-${randomBytes(4).toString('hex')}`;
  // REDIS_URL may name a cluster node: the factory asks.
  const conns = await Promise.all(
    Array.from({ length: connections }, () => openRedis({ url }, { enableAutoPipelining: true })),
  );
  const pools = conns.map((c) => new FundingPool(c, { prefix, address: 'bench' }));
  const seed = randomBytes(32).toString('hex');
  for (let i = 0; i < writes; i += 5000) {
    await pools[0]!.add(
      Array.from({ length: Math.min(5000, writes - i) }, (_, j) => ({ txId: seed, vout: i + j, satoshis: 1000 })),
    );
  }
  let next = 0;
  const reserveMs: number[] = [];
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      const pool = pools[w % connections]!;
      while (next < writes) {
        next++;
        const t0 = process.hrtime.bigint();
        const r = await pool.reserve({ owner: `w${w}-${next}` });
        reserveMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (r.status !== 'reserved') throw new Error('exhausted early');
        const txId = randomBytes(32).toString('hex');
        if (
          (await pool.commit({
            txId,
            owner: r.owner,
            inputs: r.utxos,
            outputs: [{ txId, vout: 2, satoshis: 900 }],
          })) !== 'OK'
        )
          throw new Error('commit refused');
        await pool.confirm(txId);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const status = await pools[0]!.status();
  reserveMs.sort((a, b) => a - b);
  const pct = (p: number) => reserveMs[Math.min(reserveMs.length - 1, Math.floor(p * reserveMs.length))]!.toFixed(2);
  process.stdout.write(
    `${writes} writes (reserve + commit + confirm), ${connections} connections, ${concurrency} concurrent: ${(writes / seconds).toFixed(0)} writes/s (${((3 * writes) / seconds).toFixed(0)} pool scripts/s); reserve p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms\n`,
  );
  process.stdout.write(
    `after: free ${status.free.count} (${status.free.satoshis} sat), leased ${status.leased.count}, pending ${status.pending.count}, spent ${status.spentUnconfirmed.count}\n`,
  );
  await deleteByPrefix(conns[0]!, prefix);
  await Promise.all(conns.map((c) => c.quit()));
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
