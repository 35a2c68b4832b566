import { eventually, testRedis, uniquePrefix } from '@proofline/shared-testing';
import { FeeRateCache } from './fee-rate';
import type { FeePolicy } from './fee-rate';
import type { MiningFee } from './fee-rate';
import { walletKeys } from './funding-pool';

describe('FeeRateCache', () => {
  it('answers the floor at once, 2x the policy once fetched, the last known rate while ARC fails, and refreshes when due', async () => {
    let now = 0;
    let calls = 0;
    let answer: () => Promise<MiningFee> = () => new Promise(() => undefined); // ARC hangs
    const errors: unknown[] = [];
    const cache = new FeeRateCache({
      fetchPolicy: () => {
        calls++;
        return answer();
      },
      floorSatsPerKb: 1,
      refreshMs: 1000,
      retryMs: 100,
      now: () => now,
      onError: (e) => errors.push(e),
    });
    // Never waits for ARC: the floor while the first fetch hangs, and no second fetch meanwhile.
    expect(cache.current()).toBe(1);
    expect(cache.current()).toBe(1);
    expect(calls).toBe(1);

    const fresh = new FeeRateCache({
      fetchPolicy: async () => ({ satoshis: 50, bytes: 1000 }),
      floorSatsPerKb: 1,
      refreshMs: 1000,
      now: () => now,
    });
    await fresh.refresh();
    expect(fresh.current()).toBe(100);

    answer = async () => ({ satoshis: 5, bytes: 1000 });
    const c2 = new FeeRateCache({
      fetchPolicy: () => answer(),
      floorSatsPerKb: 1,
      refreshMs: 1000,
      retryMs: 100,
      now: () => now,
      onError: (e) => errors.push(e),
    });
    await c2.refresh();
    expect(c2.current()).toBe(10);
    answer = async () => Promise.reject(new Error('ARC down'));
    now = 1500; // due: current() starts a refresh in the background, answers the last known rate
    expect(c2.current()).toBe(10);
    await c2.refresh();
    expect(errors.map(String)).toContain('Error: ARC down');
    expect(c2.current()).toBe(10);
    expect(c2.lastPolicy()).toEqual({ satoshis: 5, bytes: 1000 });
    // Never below the floor.
    const floor = new FeeRateCache({ fetchPolicy: async () => ({ satoshis: 0, bytes: 1000 }), floorSatsPerKb: 3 });
    await floor.refresh();
    expect(floor.current()).toBe(3);
  });

  it('required (testnet, mainnet): unknown until ARC answers, with the limits once known, unknown again past the max age', async () => {
    let now = 10_000;
    let answer: () => Promise<FeePolicy> = () => Promise.reject(new Error('ARC down'));
    const cache = new FeeRateCache({
      fetchPolicy: () => answer(),
      floorSatsPerKb: 1,
      required: true,
      maxAgeMs: 60_000,
      refreshMs: 1000,
      retryMs: 7000,
      now: () => now,
    });
    expect(cache.status()).toEqual({ policy: 'unknown', ageMs: null });
    await cache.refresh();
    // The next fetch is 7 s away: that is the Retry-After.
    expect(cache.writePolicy()).toEqual({ known: false, retryAfterSeconds: 7 });
    answer = async () => ({ satoshis: 50, bytes: 1000, maxTxBytes: 600, maxScriptBytes: 300 });
    now += 7000;
    await cache.refresh();
    expect(cache.writePolicy()).toEqual({ known: true, maxTxBytes: 600, maxScriptBytes: 300 });
    expect(cache.status()).toEqual({ policy: 'known', ageMs: 0 });
    expect(cache.current()).toBe(100);
    // ARC stays down past the max age: the policy is too old to price writes.
    answer = () => Promise.reject(new Error('ARC down'));
    now += 60_001;
    await cache.refresh();
    expect(cache.writePolicy()).toMatchObject({ known: false });
    expect(cache.status()).toEqual({ policy: 'unknown', ageMs: 60_001 });
    // Not required (devnet): the floor and no limits until ARC answers.
    const devnet = new FeeRateCache({ fetchPolicy: () => answer(), floorSatsPerKb: 1, now: () => now });
    await devnet.refresh();
    expect(devnet.writePolicy()).toEqual({ known: true, maxTxBytes: null, maxScriptBytes: null });
    expect(devnet.status()).toEqual({ policy: 'not-required', ageMs: null });
  });

  it('shared through Redis: a fresh process whose ARC fetch fails knows the policy another fetched, until it is too old', async () => {
    const prefix = uniquePrefix('fee');
    const { redis, cleanup } = testRedis(prefix);
    try {
      const shared = { redis, key: walletKeys(prefix).feePolicy };
      const fetcher = new FeeRateCache({
        fetchPolicy: async () => ({ satoshis: 5, bytes: 1000, maxTxBytes: 1000, maxScriptBytes: null }),
        floorSatsPerKb: 1,
        required: true,
        maxAgeMs: 60_000,
        shared,
      });
      await fetcher.start();
      expect(fetcher.writePolicy()).toMatchObject({ known: true });
      expect(await redis.pttl(shared.key)).toBeGreaterThan(59_000);

      // ARC never answers this one: it reads the shared copy at start.
      const fresh = new FeeRateCache({
        fetchPolicy: () => new Promise(() => undefined),
        floorSatsPerKb: 1,
        required: true,
        maxAgeMs: 60_000,
        shared,
      });
      void fresh.start();
      // The shared copy arrives in one read (a cluster client connects first: no fixed sleep).
      await eventually(async () => fresh.writePolicy().known, 5000);
      expect(fresh.writePolicy()).toEqual({ known: true, maxTxBytes: 1000, maxScriptBytes: null });
      expect(fresh.current()).toBe(10);

      // A copy older than the reader's max age is not a known policy.
      const strict = new FeeRateCache({
        fetchPolicy: () => Promise.reject(new Error('ARC down')),
        floorSatsPerKb: 1,
        required: true,
        maxAgeMs: 60_000,
        shared,
        now: () => Date.now() + 120_000,
      });
      await strict.start();
      expect(strict.writePolicy()).toMatchObject({ known: false });
      // Another version's copy is ignored, not thrown on.
      await redis.set(shared.key, 'not json');
      const other = new FeeRateCache({
        fetchPolicy: () => Promise.reject(new Error('ARC down')),
        floorSatsPerKb: 1,
        required: true,
        shared,
      });
      await other.start();
      expect(other.status().policy).toBe('unknown');
    } finally {
      await cleanup();
    }
  });
});
