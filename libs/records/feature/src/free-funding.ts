import type { FundingPool, FundingUtxo } from '@proofline/chain-wallet';
import { redisFailureIn } from '@proofline/shared-errors';

/** How a process takes write funding straight from the pool's free set (see {@link FreeFunding}). */
export interface TakeFromFree {
  /** UTXOs sampled per round trip (default 64). */
  readonly sample?: number;
  /** Only UTXOs worth less than this are sampled: the denomination, not the splitter's reservoir. */
  readonly belowSatoshis?: number;
}

/** After a sample found nothing, writes go straight to the reservation path for this long. */
const EMPTY_BACKOFF_MS = 250;

/**
 * Candidate funding UTXOs of one process, sampled from the pool's free set without reserving
 * them. A write takes one, builds and signs with it, and its accept script spends it only if it
 * is still free (`FROM_FREE`, else `TAKEN`): one Redis round trip per write instead of a
 * reservation and then the accept. A stale candidate costs a rebuild, never a double spend.
 *
 * The stock is refilled by one `sampleFree` call for many writes (a random window of the free
 * set, so processes seldom sample the same UTXOs); writers that find it empty share that call.
 * `take` answers null when nothing qualifies: the caller reserves instead, which is also what
 * reports an exhausted pool.
 */
export class FreeFunding {
  private stock: FundingUtxo[] = [];
  private refill: Promise<void> | null = null;
  private emptyUntil = 0;
  private readonly size: number;

  constructor(
    private readonly pool: FundingPool,
    private readonly options: TakeFromFree = {},
  ) {
    this.size = options.sample ?? 64;
    if (!Number.isSafeInteger(this.size) || this.size < 1) throw new RangeError('sample must be a positive integer');
  }

  /** A candidate worth at least `minSatoshis`, or null (then reserve). Never the same one twice. */
  async take(minSatoshis: number): Promise<FundingUtxo | null> {
    for (let refills = 0; ; refills++) {
      const found = this.pop(minSatoshis);
      if (found || refills === 2 || Date.now() < this.emptyUntil) return found;
      this.refill ??= this.load(minSatoshis).finally(() => {
        this.refill = null;
      });
      await this.refill;
    }
  }

  private pop(minSatoshis: number): FundingUtxo | null {
    // A candidate too small for this write is dropped from the stock, not from the pool.
    for (let u = this.stock.pop(); u; u = this.stock.pop()) if (u.satoshis >= minSatoshis) return u;
    return null;
  }

  private async load(minSatoshis: number): Promise<void> {
    let sample: FundingUtxo[];
    try {
      sample = await this.pool.sampleFree({
        count: this.size,
        minSatoshis,
        ...(this.options.belowSatoshis === undefined ? {} : { belowSatoshis: this.options.belowSatoshis }),
      });
    } catch (err) {
      // Redis trouble: the reservation path meets it too, and reports it (503). Anything else is
      // a bug, surfaced rather than hidden behind the slower path.
      if (!redisFailureIn(err)) throw err;
      sample = [];
    }
    if (sample.length === 0) this.emptyUntil = Date.now() + EMPTY_BACKOFF_MS;
    this.stock.push(...sample);
  }
}
