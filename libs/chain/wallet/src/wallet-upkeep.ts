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
}

/**
 * One round of wallet upkeep, for a scheduled worker job (safe from several workers at once):
 * return expired leases, import matured coinbases, then refill the pool to the low-water mark.
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
  // One split makes at most 1000 outputs: keep splitting while ARC accepts at once and the pool is
  // still short, so a POOL_TARGET above 1000 fills in one run (bounded by `maxSplits`).
  let split: SplitReport | null = null;
  let splits = 0;
  if (deps.splitter) {
    split = await deps.splitter.ensureLowWater(lowWater);
    if (split.status === 'split') splits = 1;
    while (split.status === 'split' && split.outcome === 'accepted' && splits < maxSplits) {
      const next = await deps.splitter.ensureLowWater({ ...lowWater, force: true });
      if (next.status !== 'split') {
        if (next.status !== 'sufficient') split = next;
        break;
      }
      split = next;
      splits += 1;
    }
  }
  return { swept, scan, ...(scanError === undefined ? {} : { scanError }), split, splits };
}
