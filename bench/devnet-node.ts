/**
 * `npx tsx bench/devnet-node.ts`: throughput of the devnet node (apps/devnet's ARC v1 over real
 * HTTP). Starts a private redis-server on a free port (or uses BENCH_REDIS_URL), starts the node,
 * splits a mature coinbase into 2 × BENCH_TXS (500) outputs, then submits BENCH_TXS signed P2PKH
 * spends (each ~190 bytes, every signature checked by the node: standard P2PKH directly, see p2pkh-check.ts):
 *   1. POST /v1/tx one by one, BENCH_CONCURRENCY (8) in flight;
 *   2. POST /v1/txs in batches of BENCH_BATCH (100);
 * then mines one block with all of them and times the block and one GET /v1/tx (BUMP).
 */
import { LockingScript, P2PKH, PrivateKey, Transaction } from '@bsv/sdk';
import { ArcClient } from '@proofline/chain-arc';
import { startDevnetNode } from '@proofline/devnet';
import { createRedis, deleteByPrefix } from '@proofline/shared-redis';
import { privateRedis } from './private-redis';

const TXS = Number(process.env['BENCH_TXS'] ?? 500);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 8);
const BATCH = Number(process.env['BENCH_BATCH'] ?? 100);

const key = PrivateKey.fromHex('33'.repeat(32));
const script = new P2PKH().lock(key.toAddress()).toHex();

async function spendAll(parent: Transaction, n: number): Promise<Transaction[]> {
  const out: Transaction[] = [];
  for (let i = 0; i < n; i++) {
    const tx = new Transaction();
    tx.addInput({ sourceTransaction: parent, sourceOutputIndex: i, unlockingScriptTemplate: new P2PKH().unlock(key) });
    tx.addOutput({ satoshis: 9_000, lockingScript: LockingScript.fromHex(script) });
    await tx.sign();
    out.push(tx);
  }
  return out;
}

async function main(): Promise<void> {
  const redisServer = await privateRedis();
  const redis = createRedis(redisServer.url, { maxRetriesPerRequest: 3 });
  const prefix = `bench-devnet-${process.pid}`;
  const node = await startDevnetNode({ redis, prefix, port: 0, coinbaseLockingScriptHex: script, blockIntervalMs: 0 });
  const client = new ArcClient({ url: node.url, timeoutMs: 60_000 });
  try {
    const coinbase = Transaction.fromHex(
      ((await (await fetch(`${node.url}/block/height/0/coinbase`)).json()) as { hex: string }).hex,
    );
    const fund = new Transaction();
    fund.addInput({
      sourceTransaction: coinbase,
      sourceOutputIndex: 0,
      unlockingScriptTemplate: new P2PKH().unlock(key),
    });
    for (let i = 0; i < 2 * TXS; i++)
      fund.addOutput({ satoshis: 10_000, lockingScript: LockingScript.fromHex(script) });
    await fund.sign();
    await client.submit({ txId: fund.id('hex'), hex: fund.toHexEF() });
    const txs = await spendAll(fund, 2 * TXS);
    // Signing blocked this process (client and node share it) past the node's keep-alive timeout:
    // let the idle sockets close before reusing the pool, or a request races the close (ECONNRESET).
    await new Promise((r) => setTimeout(r, 500));
    const singles = txs.slice(0, TXS);
    const batched = txs.slice(TXS);

    let next = 0;
    const t1 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < singles.length) {
          const tx = singles[next++] as Transaction;
          const r = await client.submit({ txId: tx.id('hex'), hex: tx.toHexEF() });
          if (r.kind !== 'accepted') throw new Error(`unexpected ${r.kind}`);
        }
      }),
    );
    const single = performance.now() - t1;

    const t2 = performance.now();
    for (let i = 0; i < batched.length; i += BATCH) {
      const chunk = batched.slice(i, i + BATCH);
      const rs = await client.submitMany(chunk.map((tx) => ({ txId: tx.id('hex'), hex: tx.toHexEF() })));
      if (rs.some((r) => r instanceof Error || r.kind !== 'accepted'))
        throw new Error('a batch entry was not accepted');
    }
    const batch = performance.now() - t2;

    const t3 = performance.now();
    const block = await node.mineBlock();
    const mine = performance.now() - t3;
    const t4 = performance.now();
    const st = await client.status((singles[0] as Transaction).id('hex'));
    const get = performance.now() - t4;
    if (st.kind !== 'accepted' || !st.mined) throw new Error('not mined');

    console.log(`devnet node, ${TXS} txs each way (1 input, P2PKH):`);
    console.log(
      `  POST /v1/tx  x${CONCURRENCY} in flight: ${(TXS / (single / 1000)).toFixed(0)} tx/s (${single.toFixed(0)} ms)`,
    );
    console.log(
      `  POST /v1/txs batches of ${BATCH}: ${(TXS / (batch / 1000)).toFixed(0)} tx/s (${batch.toFixed(0)} ms)`,
    );
    console.log(
      `  mineBlock with ${block.txIds.length} txs: ${mine.toFixed(0)} ms; GET /v1/tx (MINED + BUMP): ${get.toFixed(1)} ms`,
    );
  } finally {
    await node.close();
    await deleteByPrefix(redis, prefix);
    await redis.quit();
    redisServer.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
