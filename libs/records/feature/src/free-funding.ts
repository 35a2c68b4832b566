import type { FundingPool, FundingUtxo } from '@proofline/chain-wallet';

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
 * Candidate funding UTXOs of one process, sampled from one shard of the pool's free set without reserving
 * them. A write takes one, builds and signs with it, and its accept script spends it only if it
 * is still free (`FROM_FREE`, else `TAKEN`): one Redis round trip per write instead of a
 * reservation and then the accept. A stale candidate costs a rebuild, never a double spend.
 *
 * The stock is refilled by one `sampleFree` call for many writes (a random window of the free
 * set, so processes seldom sample the same UTXOs); writers that find it empty share that call.
 * `take` answers null when nothing qualifies: the caller reserves instead, which is also what
 * reports an exhausted pool. A failed sample fails the writes waiting for it.
 */
export class FreeFunding {
  private stock: FundingUtxo[] = [];
  private refill: Promise<void> | null = null;
  private emptyUntil = 0;
  private readonly size: number;

  constructor(
    private readonly pool: FundingPool,
    private readonly options: TakeFromFree = {},
    /** The pool shard (records partition unit) sampled; default the pool's first. */
    private readonly partition?: string,
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
    // A failure is the writes' failure (a Redis one answers 503 REDIS_UNAVAILABLE like any other
    // Redis call of the write): falling back to a reservation would make a write wait out a
    // second command timeout against a frozen Redis, past the operations issue's 2 s bound.
    const sample = await this.pool.sampleFree({
      ...(this.partition === undefined ? {} : { partition: this.partition }),
      count: this.size,
      minSatoshis,
      ...(this.options.belowSatoshis === undefined ? {} : { belowSatoshis: this.options.belowSatoshis }),
    });
    if (sample.length === 0) this.emptyUntil = Date.now() + EMPTY_BACKOFF_MS;
    this.stock.push(...sample);
  }
}
