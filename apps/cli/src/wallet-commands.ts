import { FundingPool, fundingIdentity, parseUtxoSpec, rebalance, reservoir } from '@proofline/chain-wallet';
import type { SplitReport } from '@proofline/chain-wallet';
import { readPartitionLayouts } from '@proofline/shared-redis';
import type { CliContext } from './main';
import { cliSplitter } from './wallet-ports';

/** The pool over every live partition: the layout registry read once (the CLI adds no layout). */
async function poolOf(ctx: CliContext): Promise<FundingPool> {
  const { address } = fundingIdentity(ctx.config.wallet.seed, ctx.config.network);
  const pool = new FundingPool(ctx.redis, {
    prefix: ctx.config.redisPrefix,
    address,
    partitions: ctx.config.redisPartitions,
  });
  if (!pool.partitions.single)
    for (const count of await readPartitionLayouts(ctx.redis, ctx.config.redisPrefix))
      if (count > 1) pool.partitions.layouts.add(count);
  return pool;
}

const sat = (n: number) => `${n.toLocaleString('en-US')} sat`;

/** `wallet status`: funding address, balance, pool size and pending spends. */
export async function walletStatus(ctx: CliContext): Promise<void> {
  const pool = await poolOf(ctx);
  const [s, unsettled] = await Promise.all([pool.status(), pool.unsettled(20)]);
  const lines = [
    `network         ${ctx.config.network}`,
    `funding address ${s.address}`,
    `balance         ${sat(s.balance)} (free + leased + pending)`,
    `free            ${s.free.count} UTXOs, ${sat(s.free.satoshis)} (${await pool.denominatedCount(ctx.config.wallet.utxoSatoshis)} of ${sat(ctx.config.wallet.utxoSatoshis)}; low water ${ctx.config.wallet.lowWater}, target ${ctx.config.wallet.target})`,
    `leased          ${s.leased.count} UTXOs, ${sat(s.leased.satoshis)} (reserved by writers)`,
    `pending         ${s.pending.count} outputs, ${sat(s.pending.satoshis)} (change and split outputs ARC has not accepted yet)`,
    `spent           ${s.spentUnconfirmed.count} inputs, ${sat(s.spentUnconfirmed.satoshis)} (in transactions ARC has not settled)`,
    `pending spends  ${s.unsettledTransactions}`,
    ...unsettled.map(
      (t) =>
        `  ${t.txId} ${t.kind} since ${t.committedAt.toISOString()} inputs ${t.inputs.length} outputs ${t.outputs.length}`,
    ),
  ];
  if (s.unsettledTransactions > unsettled.length)
    lines.push(`  ... and ${s.unsettledTransactions - unsettled.length} more`);
  if (s.balance === 0)
    lines.push(
      `The wallet is empty: fund ${s.address} (devnet: its coinbase pays this address) and import the UTXO with: npm run cli -- wallet import TXID:VOUT:SATS`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** `wallet split`: forces a split up to POOL_TARGET through the same splitter the worker runs. */
export async function walletSplit(ctx: CliContext): Promise<void> {
  const splitter = await cliSplitter(ctx.redis, ctx.config);
  const pool = await poolOf(ctx);
  const w = ctx.config.wallet;
  // In the shard holding the most, for the whole pool; its outputs then spread over the shards.
  const report = await splitter.ensureLowWater({
    lowWater: w.lowWater,
    target: w.target,
    satoshisEach: w.utxoSatoshis,
    force: true,
    ...(await reservoir(pool)),
  });
  if (report.status === 'split' && report.outcome === 'accepted') await rebalance(pool, w.utxoSatoshis);
  process.stdout.write(`${JSON.stringify(report)}\n`);
  const problem = splitProblem(report);
  if (problem) throw new Error(problem);
}

/** A one-line reason when a forced split did not refill the pool, else null. */
export function splitProblem(report: SplitReport): string | null {
  switch (report.status) {
    case 'unreachable':
      return `ARC is not reachable (${report.error}); split ${report.txId} stays committed and its same bytes are re-submitted by the next run`;
    case 'rejected':
      return `ARC rejected split ${report.txId}: ${report.code} ${report.reason}; inputs ${report.inputsReleased ? 'returned to the pool' : 'dropped (they may be spent)'}`;
    case 'exhausted':
      return `nothing large enough to split (${sat(report.availableSatoshis)} above the denomination); fund the wallet first`;
    case 'busy':
      return 'another split is running (a worker holds the split lock); try again shortly';
    default:
      return null;
  }
}

/** `wallet import TXID:VOUT:SATS ...`: adds deposits paying the funding address to the pool. */
export async function walletImport(ctx: CliContext): Promise<void> {
  if (ctx.args.length === 0) throw new Error('usage: wallet import TXID:VOUT:SATS [TXID:VOUT:SATS ...]');
  const utxos = ctx.args.map(parseUtxoSpec);
  const added = await (await poolOf(ctx)).add(utxos);
  process.stdout.write(`${JSON.stringify({ total: utxos.length, imported: added, skipped: utxos.length - added })}\n`);
}
