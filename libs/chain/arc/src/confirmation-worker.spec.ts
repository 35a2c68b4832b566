import { eventually, testBullRedis, testRedis, uniquePrefix } from '@proofline/shared-testing';
import type { ArcStatusResult } from './arc-client';
import { CONFIRM_LOCK_MS, startConfirmationWorker } from './confirmation-worker';
import type { RunningConfirmationWorker } from './confirmation-worker';
import { ArcProofStore, arcKeys } from './proof-store';

/**
 * The confirmation run lock (real Redis, real BullMQ): short-lived so that a worker that dies
 * mid-run holds up confirmations for seconds, renewed so that a slow live run keeps it.
 */
describe('confirmation worker run lock', () => {
  const prefix = uniquePrefix('confirm-lock');
  const { redis, cleanup } = testRedis(prefix);
  const bull = testBullRedis();
  const store = new ArcProofStore(redis, prefix);
  const lockKey = arcKeys(prefix).confirmLock;
  const running: RunningConfirmationWorker[] = [];
  /** A status source that answers only when released: the pass holding the lock is slow. */
  let release: () => void = () => undefined;
  let asked = 0;
  const slowStatus = {
    status: (txId: string): Promise<ArcStatusResult> => {
      asked++;
      return new Promise((_resolve, reject) => {
        release = () => reject(new Error(`no status for ${txId} (test)`));
      });
    },
  };
  const start = async () => {
    const w = await startConfirmationWorker({
      connection: bull,
      redis,
      redisPrefix: prefix,
      pollMs: 3_600_000,
      pass: {
        client: slowStatus,
        rebroadcast: async () => [],
        headers: {
          tip: async () => ({ height: 0, hash: '00'.repeat(32) }),
          headerByHash: async () => null,
        },
        store,
        redis,
        prefix,
        rawTxOf: async (txIds) => txIds.map(() => null),
        onRefused: async () => undefined,
      },
    });
    running.push(w);
    return w;
  };

  afterAll(async () => {
    for (const w of running) await w.close();
    await bull.quit();
    await cleanup();
  });

  it('a slow run renews its lock past CONFIRM_LOCK_MS; the lock of a holder that died frees within it', async () => {
    await store.watch(['ab'.repeat(32)], new Date());
    // The scheduler's first tick starts a run at once (pollMs is an hour: no second tick here).
    const worker = await start();
    await eventually(async () => asked === 1, 5000, 10);
    const token = await redis.get(lockKey);
    expect(token).toBeTruthy();
    // Never the old 30 s: a crash holds the next pass up for CONFIRM_LOCK_MS at most.
    expect(await redis.pttl(lockKey)).toBeLessThanOrEqual(CONFIRM_LOCK_MS);
    await new Promise((r) => setTimeout(r, CONFIRM_LOCK_MS + 1000));
    // still this run's, renewed while it lasted
    expect(await redis.get(lockKey)).toBe(token);
    expect(await worker.runOnce()).toBeNull();
    release();
    await eventually(async () => (await redis.exists(lockKey)) === 0, 5000, 20);

    // A holder that died mid-run (its lock no longer renewed): the next run waits for it at most
    // CONFIRM_LOCK_MS.
    await redis.set(lockKey, 'a worker that died', 'PX', CONFIRM_LOCK_MS);
    expect(await worker.runOnce()).toBeNull();
    const freedAt = Date.now();
    let attempt: Promise<unknown> = Promise.resolve(null);
    await eventually(
      async () => {
        // null while the dead holder's lock lasts; the attempt that takes it hangs in the slow pass
        if (asked < 2) attempt = worker.runOnce();
        await new Promise((r) => setTimeout(r, 50));
        return asked === 2;
      },
      CONFIRM_LOCK_MS + 3000,
      100,
    );
    expect(Date.now() - freedAt).toBeLessThan(CONFIRM_LOCK_MS + 3000);
    release();
    expect(await attempt).not.toBeNull();
  }, 30_000);
});
