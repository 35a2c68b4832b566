import { effectiveFeeRate } from './funding-wallet';
import type { MiningFee } from './funding-wallet';

export interface FeeRateCacheOptions {
  /** ARC's `GET /v1/policy` mining fee (the composition adapts the ARC client to this). */
  readonly fetchPolicy: () => Promise<MiningFee>;
  /** `FEE_FLOOR_SATS_PER_KB`: the rate while no policy is known, and the lowest ever paid. */
  readonly floorSatsPerKb: number;
  /** How long a fetched policy is used before it is fetched again (default 5 minutes). */
  readonly refreshMs?: number;
  /** After a failed fetch, wait this long before trying again (default 30 s). */
  readonly retryMs?: number;
  readonly now?: () => number;
  /** Told about a failed fetch (logging); the last known policy (or the floor) stays in use. */
  readonly onError?: (err: unknown) => void;
}

/**
 * The fee rate record transactions are built with, for a process that writes (the API): the
 * last ARC policy it fetched, refreshed in the background every few minutes. {@link current}
 * never waits for ARC: with no policy yet (ARC down at start) it answers the floor, after a
 * failed refresh the last known policy. One fetch at a time.
 */
export class FeeRateCache {
  private policy: MiningFee | null = null;
  private nextFetchAt = 0;
  private inFlight: Promise<void> | null = null;
  private readonly refreshMs: number;
  private readonly retryMs: number;
  private readonly now: () => number;

  constructor(private readonly options: FeeRateCacheOptions) {
    this.refreshMs = options.refreshMs ?? 300_000;
    this.retryMs = options.retryMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  /** Satoshis per 1000 bytes: `effectiveFeeRate(last policy, floor)`. Starts a background refresh when due. */
  current(): number {
    if (this.now() >= this.nextFetchAt && !this.inFlight) void this.refresh();
    return effectiveFeeRate(this.policy, this.options.floorSatsPerKb);
  }

  /** Fetches the policy now (at start, and from {@link current} when due). Never throws. */
  refresh(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    const run = (async () => {
      try {
        this.policy = await this.options.fetchPolicy();
        this.nextFetchAt = this.now() + this.refreshMs;
      } catch (err) {
        this.nextFetchAt = this.now() + this.retryMs;
        this.options.onError?.(err);
      }
    })();
    this.inFlight = run;
    void run.finally(() => {
      if (this.inFlight === run) this.inFlight = null;
    });
    return run;
  }

  /** The last fetched policy (null before the first success). */
  lastPolicy(): MiningFee | null {
    return this.policy;
  }
}
