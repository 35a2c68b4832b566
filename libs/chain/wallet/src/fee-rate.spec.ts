import { FeeRateCache } from './fee-rate';
import type { MiningFee } from './funding-wallet';

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
});
