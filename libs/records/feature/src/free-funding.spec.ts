/**
 * FreeFunding's stock against a real pool: one sample serves many writes, candidates too small
 * for a write are skipped, an empty free set answers null (the caller reserves), and a failed
 * sample fails the writes that wait for it.
 */
import { FundingPool } from '@proofline/chain-wallet';
import { fundPool } from '@proofline/records-testing';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { FreeFunding, sampleSizeFor } from './record-writes';

describe('FreeFunding (real Redis)', () => {
  const prefix = uniquePrefix('freefunding');
  const { redis, cleanup } = testRedis(prefix);
  afterAll(cleanup);
  let n = 0;
  const newPool = () => new FundingPool(redis, { prefix: `${prefix}:${++n}`, address: 'test' });

  it('one sample serves many takes, of qualifying UTXOs only, never the same one twice', async () => {
    const pool = newPool();
    await fundPool(pool, 6, 1000);
    await fundPool(pool, 2, 300);
    let samples = 0;
    const counting = Object.assign(Object.create(pool) as FundingPool, {
      sampleFree: (r: Parameters<FundingPool['sampleFree']>[0]) => (samples++, pool.sampleFree(r)),
    });
    const free = new FreeFunding(counting, { sample: 8 });
    const taken = [];
    for (let i = 0; i < 6; i++) taken.push(await free.take(500));
    expect(samples).toBe(1);
    expect(taken.every((u) => u !== null && u.satoshis === 1000)).toBe(true);
    expect(new Set(taken.map((u) => `${u!.txId}:${u!.vout}`)).size).toBe(6);
    // the stock is spent: the next take samples again (the same six are still free: nothing was committed)
    expect(await free.take(500)).not.toBeNull();
    expect(samples).toBe(2);
    // nothing was reserved
    expect((await pool.status()).leased.count).toBe(0);
  });

  it('drops candidates older than maxAgeMs unused: the next take samples again', async () => {
    const pool = newPool();
    await fundPool(pool, 6, 1000);
    const counts: number[] = [];
    const counting = Object.assign(Object.create(pool) as FundingPool, {
      sampleFree: (r: Parameters<FundingPool['sampleFree']>[0]) => (counts.push(r.count), pool.sampleFree(r)),
    });
    const free = new FreeFunding(counting, { sample: 4, maxAgeMs: 50 });
    expect(await free.take(500)).not.toBeNull();
    expect(await free.take(500)).not.toBeNull();
    expect(counts).toEqual([4]);
    await new Promise((r) => setTimeout(r, 80));
    // Two candidates were left, but older than 50 ms: a fresh sample instead.
    expect(await free.take(500)).not.toBeNull();
    expect(counts).toEqual([4, 4]);
  });

  it("samples fewer UTXOs a round trip the more partitions share the process's writes", async () => {
    expect([1, 2, 8, 16, 64, 256].map(sampleSizeFor)).toEqual([64, 64, 64, 32, 8, 8]);
    const pool = new FundingPool(redis, { prefix: `${prefix}:${++n}`, address: 'test', partitions: 64 });
    const unit = pool.partitions.unit(5);
    await fundPool(pool, 128, 1000);
    const counts: number[] = [];
    const counting = Object.assign(Object.create(pool) as FundingPool, {
      sampleFree: (r: Parameters<FundingPool['sampleFree']>[0]) => (counts.push(r.count), pool.sampleFree(r)),
    });
    expect(await new FreeFunding(counting, {}, unit).take(500)).not.toBeNull();
    expect(counts).toEqual([8]);
  });

  it('answers null when nothing qualifies, and does not sample again at once', async () => {
    const pool = newPool();
    let samples = 0;
    const counting = Object.assign(Object.create(pool) as FundingPool, {
      sampleFree: (r: Parameters<FundingPool['sampleFree']>[0]) => (samples++, pool.sampleFree(r)),
    });
    const free = new FreeFunding(counting);
    expect(await free.take(1)).toBeNull();
    expect(await free.take(1)).toBeNull();
    expect(samples).toBe(1);
  });

  it('a failed sample fails the writes waiting for it (a Redis failure answers 503 at once, never a second wait through a reservation)', async () => {
    const pool = newPool();
    await fundPool(pool, 2, 1000);
    const failing = (err: Error) =>
      Object.assign(Object.create(pool) as FundingPool, { sampleFree: () => Promise.reject(err) });
    const unavailable = Object.assign(new Error('Command timed out'), { name: 'Error' });
    const free = new FreeFunding(failing(unavailable));
    await expect(Promise.all([free.take(1), free.take(1)])).rejects.toBe(unavailable);
    await expect(new FreeFunding(failing(new TypeError('walletSample is not a function'))).take(1)).rejects.toThrow(
      TypeError,
    );
  });
});
