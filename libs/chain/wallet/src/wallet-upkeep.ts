import type { CoinbaseScanner, ScanReport } from './coinbase-scan';
import type { FundingPool } from './funding-pool';
import type { LowWaterRequest, SplitReport, Splitter } from './splitter';

export interface UpkeepDeps {
  readonly pool: FundingPool;
  /** Null when no ARC client is configured (then nothing is split). */
  readonly splitter: Splitter | null;
  /** The devnet's coinbase import; null on testnet/mainnet (deposits come by `wallet import`). */
  readonly scanner: CoinbaseScanner | null;
}

export interface UpkeepReport {
  /** Expired leases returned to free. */
  readonly swept: number;
  readonly scan: ScanReport | null;
  /** Why the coinbase scan failed this run (the devnet unreachable); the split still ran. */
  readonly scanError?: string;
  /** The last split report of the run. */
  readonly split: SplitReport | null;
  /** Splits made this run (each up to 1000 outputs). */
  readonly splits: number;
  /** Denomination UTXOs moved between shards to even them out (several partitions). */
  readonly moved: number;
}

/**
 * One round of wallet upkeep, for a scheduled worker job (safe from several workers at once):
 * return expired leases, import matured coinbases, then refill the pool to the low-water mark.
 * With several shards (records partitions) the split runs in the shard holding the most (the
 * marks count the whole pool) and its outputs go, when ARC accepts it, straight to the shards
 * with the fewest; a rebalance then evens out what writes left uneven.
 * Throws what the pool throws (Redis down), so the job's next run retries; a failed coinbase scan
 * (the devnet unreachable) is `scanError` and the split still runs on what the pool holds; ARC
 * being unreachable is a `split` report, not an error.
 */
export async function walletUpkeep(deps: UpkeepDeps, lowWater: LowWaterRequest, maxSplits = 20): Promise<UpkeepReport> {
  const swept = await deps.pool.sweep();
  let scan: ScanReport | null = null;
  let scanError: string | undefined;
  try {
    scan = deps.scanner ? await deps.scanner.scan() : null;
  } catch (err) {
    scanError = err instanceof Error ? err.message : String(err);
  }
  const { pool, splitter } = deps;
  if (pool.partitions.single) {
    const { split, splits } = splitter ? await splitShard(splitter, lowWater, maxSplits) : { split: null, splits: 0 };
    return { swept, scan, ...(scanError === undefined ? {} : { scanError }), split, splits, moved: 0 };
  }
  // Several shards: finish moves a crashed run (or confirm) left, split for the whole pool in the
  // shard that holds the most (the reservoir: deposits and coinbases; its outputs are destined
  // to the shards with the fewest), then even out what is still uneven.
  await pool.finishMoves();
  let split: SplitReport | null = null;
  let splits = 0;
  if (splitter)
    ({ split, splits } = await splitShard(splitter, { ...lowWater, ...(await reservoir(pool)) }, maxSplits));
  const moved = await rebalance(pool, lowWater.satoshisEach);
  return { swept, scan, ...(scanError === undefined ? {} : { scanError }), split, splits, moved };
}

/**
 * Where a split for the whole pool runs: the shard with the most free satoshis (deposits and
 * coinbases, the splitter's inputs, gather there), the low-water mark counted over every shard.
 * With one shard, that shard.
 */
export async function reservoir(pool: FundingPool): Promise<{ partition: string; wholePool: boolean }> {
  if (pool.partitions.single) return { partition: pool.partitions.unit(0), wholePool: false };
  const free = await pool.freeSatoshisByShard();
  return { partition: pool.partitions.unit(free.indexOf(Math.max(...free))), wholePool: true };
}

/**
 * Spreads free denomination UTXOs over the shards: every shard below its share
 * (`ceil(total / shards)`) gets UTXOs from the shards above it, largest surplus first.
 * @returns how many moved.
 */
export async function rebalance(pool: FundingPool, satoshisEach: number): Promise<number> {
  const units = pool.partitions.units;
  const counts = await Promise.all(units.map((partition) => pool.denominatedCount(satoshisEach, { partition })));
  const total = counts.reduce((a, b) => a + b, 0);
  const share = Math.ceil(total / units.length);
  let moved = 0;
  for (let to = 0; to < units.length; to++) {
    while ((counts[to] ?? 0) < share) {
      let from = 0;
      for (let i = 1; i < counts.length; i++) if ((counts[i] ?? 0) > (counts[from] ?? 0)) from = i;
      const surplus = (counts[from] ?? 0) - share;
      if (surplus <= 0) return moved;
      const n = await pool.moveFree(units[from] as string, units[to] as string, {
        count: Math.min(surplus, share - (counts[to] ?? 0)),
        minSatoshis: satoshisEach,
        belowSatoshis: 2 * satoshisEach,
      });
      // Taken by writers meanwhile: count again next run.
      if (n === 0) return moved;
      counts[from] = (counts[from] ?? 0) - n;
      counts[to] = (counts[to] ?? 0) + n;
      moved += n;
    }
  }
  return moved;
}

/**
 * Refills a shard. One split makes at most 1000 outputs: keep splitting while ARC accepts at
 * once and the shard is still short, so a target above 1000 fills in one run (bounded by
 * `maxSplits`).
 */
async function splitShard(
  splitter: Splitter,
  lowWater: LowWaterRequest,
  maxSplits: number,
): Promise<{ split: SplitReport; splits: number }> {
  let split = await splitter.ensureLowWater(lowWater);
  let splits = split.status === 'split' ? 1 : 0;
  while (split.status === 'split' && split.outcome === 'accepted' && splits < maxSplits) {
    const next = await splitter.ensureLowWater({ ...lowWater, force: true });
    if (next.status !== 'split') {
      if (next.status !== 'sufficient') split = next;
      break;
    }
    split = next;
    splits += 1;
  }
  return { split, splits };
}
