import type { RedisClient } from '@proofline/shared-redis';

/** ARC's `policy.miningFee` from `GET /v1/policy`. */
export interface MiningFee {
  readonly satoshis: number;
  readonly bytes: number;
}

/**
 * The fee rate (satoshis per 1000 bytes) a transaction is built with: twice ARC's mining fee,
 * never below `FEE_FLOOR_SATS_PER_KB`. The margin exists because a record's transaction can
 * never be rebuilt (its txId is returned at write time), so it must clear a policy that rises a
 * little before it is broadcast. Without a policy (ARC unreachable) the floor alone applies.
 */
export function effectiveFeeRate(policy: MiningFee | null, floorSatsPerKb: number): number {
  const fromPolicy =
    policy && policy.bytes > 0 && policy.satoshis >= 0 ? Math.ceil((2 * policy.satoshis * 1000) / policy.bytes) : 0;
  return Math.max(floorSatsPerKb, fromPolicy);
}

/** ARC's `GET /v1/policy` as writes use it: the mining fee and the size limits (null: not given). */
export interface FeePolicy extends MiningFee {
  /** `maxtxsizepolicy`: ARC answers 474 to a larger transaction. */
  readonly maxTxBytes?: number | null;
  /** `maxscriptsizepolicy`: the node's largest script (a record's data output is one). */
  readonly maxScriptBytes?: number | null;
}

/** What a write may do now (see {@link FeeRateCache.writePolicy}). */
export type WritePolicy =
  | { readonly known: true; readonly maxTxBytes: number | null; readonly maxScriptBytes: number | null }
  | { readonly known: false; readonly retryAfterSeconds: number };

/** Readiness detail: `not-required` on the devnet, else whether a fresh enough policy is known. */
export interface FeePolicyStatus {
  readonly policy: 'known' | 'unknown' | 'not-required';
  /** Age of the policy in use (ms), null when none was ever fetched. */
  readonly ageMs: number | null;
}

export interface FeeRateCacheOptions {
  /** ARC's `GET /v1/policy` (the composition adapts the ARC client to this). */
  readonly fetchPolicy: () => Promise<FeePolicy>;
  /** `FEE_FLOOR_SATS_PER_KB`: the rate while no policy is known, and the lowest ever paid. */
  readonly floorSatsPerKb: number;
  /**
   * True outside the devnet: writes MUST NOT be built while no policy younger than `maxAgeMs` is
   * known ({@link writePolicy} answers `known: false`), since an operator charging more than the
   * floor answers 465, which is final. False (devnet): the floor until the first answer.
   */
  readonly required?: boolean;
  /** `FEE_POLICY_MAX_AGE_MS`: how old a policy may be and still count as known (default 1 hour). */
  readonly maxAgeMs?: number;
  /**
   * The policy shared by every process of the deployment (`<prefix>:wallet:fee-policy`): each
   * fetch writes it there (expiring after `maxAgeMs`), and {@link start} and a failed fetch read
   * it, so a fresh process knows a policy at once even while ARC does not answer it.
   */
  readonly shared?: { readonly redis: RedisClient; readonly key: string };
  /** How long a fetched policy is used before it is fetched again (default 5 minutes). */
  readonly refreshMs?: number;
  /** After a failed fetch, wait this long before trying again (default 30 s). */
  readonly retryMs?: number;
  readonly now?: () => number;
  /** Told about a failed fetch (logging); the last known policy (or the floor) stays in use. */
  readonly onError?: (err: unknown) => void;
}

interface HeldPolicy {
  readonly policy: FeePolicy;
  /** When it was fetched from ARC (ms). */
  readonly fetchedAt: number;
}

/**
 * ARC's fee policy for a process that builds transactions (the API, the wallet worker): the last
 * policy it fetched or read from the shared copy, refreshed in the background every few minutes.
 * Nothing here waits for ARC: {@link current} answers the floor before the first policy and the
 * last known one after a failed refresh; {@link writePolicy} says whether a write may be built now.
 * One fetch at a time.
 */
export class FeeRateCache {
  private held: HeldPolicy | null = null;
  private nextFetchAt = 0;
  private inFlight: Promise<void> | null = null;
  private readonly refreshMs: number;
  private readonly retryMs: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(private readonly options: FeeRateCacheOptions) {
    this.refreshMs = options.refreshMs ?? 300_000;
    this.retryMs = options.retryMs ?? 30_000;
    this.maxAgeMs = options.maxAgeMs ?? 3_600_000;
    this.now = options.now ?? Date.now;
  }

  /** Reads the shared copy and fetches from ARC, together (at start; never throws, never waits for ARC to use the copy). */
  async start(): Promise<void> {
    await Promise.all([this.loadShared(), this.refresh()]);
  }

  /** Satoshis per 1000 bytes: `effectiveFeeRate(last policy, floor)`. Starts a background refresh when due. */
  current(): number {
    this.refreshIfDue();
    return effectiveFeeRate(this.held?.policy ?? null, this.options.floorSatsPerKb);
  }

  /**
   * Whether a write may be built now and the limits its transaction must keep. `known: false`
   * only when `required` and no policy younger than `maxAgeMs` is held; its `retryAfterSeconds`
   * is the time until the next fetch. Starts a background refresh when due.
   */
  writePolicy(): WritePolicy {
    this.refreshIfDue();
    const p = this.fresh()?.policy;
    if (p) return { known: true, maxTxBytes: p.maxTxBytes ?? null, maxScriptBytes: p.maxScriptBytes ?? null };
    if (!this.options.required) return { known: true, maxTxBytes: null, maxScriptBytes: null };
    return {
      known: false,
      retryAfterSeconds: Math.min(30, Math.max(1, Math.ceil((this.nextFetchAt - this.now()) / 1000))),
    };
  }

  /** For readiness: whether writes have the policy they need. */
  status(): FeePolicyStatus {
    const ageMs = this.held ? Math.max(0, this.now() - this.held.fetchedAt) : null;
    if (!this.options.required) return { policy: 'not-required', ageMs };
    return { policy: this.fresh() ? 'known' : 'unknown', ageMs };
  }

  /** Fetches the policy now (at start, and from {@link current} when due). Never throws. */
  refresh(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    const run = (async () => {
      try {
        const fetched = { policy: await this.options.fetchPolicy(), fetchedAt: this.now() };
        this.adopt(fetched);
        this.nextFetchAt = this.now() + this.refreshMs;
        await this.saveShared(fetched);
      } catch (err) {
        this.nextFetchAt = this.now() + this.retryMs;
        this.options.onError?.(err);
        // Another process may have fetched it meanwhile.
        await this.loadShared();
      }
    })();
    this.inFlight = run;
    void run.finally(() => {
      if (this.inFlight === run) this.inFlight = null;
    });
    return run;
  }

  /** The last fetched policy (null before the first success). */
  lastPolicy(): FeePolicy | null {
    return this.held?.policy ?? null;
  }

  private refreshIfDue(): void {
    if (this.now() >= this.nextFetchAt && !this.inFlight) void this.refresh();
  }

  private fresh(): HeldPolicy | null {
    return this.held && this.now() - this.held.fetchedAt <= this.maxAgeMs ? this.held : null;
  }

  /** Keeps the newer of the held policy and `p`. */
  private adopt(p: HeldPolicy): void {
    if (!this.held || p.fetchedAt >= this.held.fetchedAt) this.held = p;
  }

  private async saveShared(p: HeldPolicy): Promise<void> {
    const shared = this.options.shared;
    if (!shared) return;
    try {
      await shared.redis.set(shared.key, JSON.stringify({ ...p.policy, fetchedAt: p.fetchedAt }), 'PX', this.maxAgeMs);
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  private async loadShared(): Promise<void> {
    const shared = this.options.shared;
    if (!shared) return;
    try {
      const text = await shared.redis.get(shared.key);
      const p = text ? parseHeld(text) : null;
      if (p) this.adopt(p);
    } catch (err) {
      this.options.onError?.(err);
    }
  }
}

/** The shared copy, or null when it is not one (written by another version): it is then ignored. */
function parseHeld(text: string): HeldPolicy | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const num = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x >= 0;
  const limit = (x: unknown) => (num(x) ? (x as number) : null);
  if (!num(o['satoshis']) || !num(o['bytes']) || !num(o['fetchedAt']) || (o['bytes'] as number) <= 0) return null;
  return {
    policy: {
      satoshis: o['satoshis'] as number,
      bytes: o['bytes'] as number,
      maxTxBytes: limit(o['maxTxBytes']),
      maxScriptBytes: limit(o['maxScriptBytes']),
    },
    fetchedAt: o['fetchedAt'] as number,
  };
}
