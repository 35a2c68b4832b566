import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '@proofline/shared-config';
import { loadLuaCommands } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import { keysMatching, testRedis, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { poolCommitLua } from './commit-contract';
import { FROM_FREE, FundingPool } from './funding-pool';
import { toOutpoint } from './funding-pool';
import type { FundingUtxo } from './ports';

const txId = () => randomBytes(32).toString('hex');
const utxos = (n: number, satoshis = 1000): FundingUtxo[] => {
  const id = txId();
  return Array.from({ length: n }, (_, vout) => ({ txId: id, vout, satoshis }));
};

/** Recomputes every counter from the pool's structures, so a test sees a counter that drifted. */
async function audit(redis: RedisClient, pool: FundingPool) {
  const k = pool.keys;
  const [free, leases, sats, spent, pending] = await Promise.all([
    redis.zrange(k.free, 0, -1, 'WITHSCORES'),
    redis.zrange(k.leases, 0, -1),
    redis.hgetall(k.sats),
    redis.hgetall(k.spent),
    redis.hgetall(k.pending),
  ]);
  const sum = (ops: string[]) => ops.reduce((s, op) => s + Number(sats[op]), 0);
  const freeOps = free.filter((_, i) => i % 2 === 0);
  const states = [...freeOps, ...leases, ...Object.keys(spent), ...Object.keys(pending)];
  // Every tracked outpoint is in exactly one state.
  expect(new Set(states).size).toBe(states.length);
  expect(states.sort()).toEqual(Object.keys(sats).sort());
  const status = await pool.status();
  expect(status.free).toEqual({ count: freeOps.length, satoshis: sum(freeOps) });
  expect(status.leased).toEqual({ count: leases.length, satoshis: sum(leases) });
  expect(status.spentUnconfirmed).toEqual({ count: Object.keys(spent).length, satoshis: sum(Object.keys(spent)) });
  expect(status.pending).toEqual({ count: Object.keys(pending).length, satoshis: sum(Object.keys(pending)) });
  expect(status.balance).toBe(status.free.satoshis + status.leased.satoshis + status.pending.satoshis);
  return status;
}

async function snapshot(redis: RedisClient, prefix: string): Promise<Record<string, string>> {
  const keys = await keysMatching(redis, `${prefix}:*`);
  const out: Record<string, string> = {};
  for (const key of keys) out[key] = ((await redis.dumpBuffer(key)) ?? Buffer.alloc(0)).toString('hex');
  return out;
}

describe('FundingPool (real Redis)', () => {
  const prefix = uniquePrefix('wallet');
  const { redis, cleanup } = testRedis(prefix);
  let n = 0;
  const newPool = (clock = new ManualClock('2026-11-01T00:00:00Z'), conn: RedisClient = redis) => ({
    pool: new FundingPool(conn, { prefix: `${prefix}:${++n}`, address: 'mtest', clock }),
    clock,
  });

  afterAll(cleanup);

  it('50 concurrent reservations from 5 connections never share a UTXO; the 51st+ are exhausted', async () => {
    const conns = Array.from({ length: 5 }, () => testRedisClient());
    try {
      const p = `${prefix}:${++n}`;
      const clock = new ManualClock('2026-11-01T00:00:00Z');
      const pools = conns.map((c) => new FundingPool(c, { prefix: p, address: 'mtest', clock }));
      await pools[0]!.add(utxos(40));
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) => pools[i % 5]!.reserve({ owner: `w${i}` })),
      );
      const reserved = outcomes.flatMap((o) => (o.status === 'reserved' ? o.utxos : []));
      expect(reserved).toHaveLength(40);
      expect(new Set(reserved.map(toOutpoint)).size).toBe(40);
      expect(outcomes.filter((o) => o.status === 'exhausted')).toHaveLength(10);
      for (const o of outcomes) if (o.status === 'exhausted') expect(o.available).toBe(0);
      // Each lease is recorded for the writer that got it.
      for (const [i, o] of outcomes.entries()) {
        if (o.status === 'reserved')
          expect(await redis.hget(pools[0]!.keys.owners, toOutpoint(o.utxos[0]!))).toBe(`w${i}`);
      }
      const status = await audit(redis, pools[0]!);
      expect(status.leased.count).toBe(40);
      expect(status.free.count).toBe(0);
    } finally {
      await Promise.all(conns.map((c) => c.quit()));
    }
  });

  it('50 concurrent multi-UTXO reservations (2 each) from 5 connections with plenty free: 100 distinct UTXOs', async () => {
    const conns = Array.from({ length: 5 }, () => testRedisClient());
    try {
      const p = `${prefix}:${++n}`;
      const pools = conns.map((c) => new FundingPool(c, { prefix: p, address: 'mtest' }));
      await pools[0]!.add(utxos(150));
      const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => pools[i % 5]!.reserve({ count: 2 })));
      const reserved = outcomes.flatMap((o) => (o.status === 'reserved' ? o.utxos : []));
      expect(reserved).toHaveLength(100);
      expect(new Set(reserved.map(toOutpoint)).size).toBe(100);
      expect((await audit(redis, pools[0]!)).free.count).toBe(50);
    } finally {
      await Promise.all(conns.map((c) => c.quit()));
    }
  });

  it('exhaustion answers the typed outcome and changes nothing', async () => {
    const { pool } = newPool();
    await pool.add([...utxos(2, 1000), ...utxos(3, 200)]);
    const before = await snapshot(redis, pool.keys.free.replace(/:wallet:free$/, ''));
    expect(await pool.reserve({ count: 3, minSatoshis: 500 })).toEqual({ status: 'exhausted', available: 2 });
    expect(await snapshot(redis, pool.keys.free.replace(/:wallet:free$/, ''))).toEqual(before);
    const ok = await pool.reserve({ count: 2, minSatoshis: 500 });
    expect(ok.status).toBe('reserved');
    if (ok.status === 'reserved') expect(ok.utxos.map((u) => u.satoshis)).toEqual([1000, 1000]);
    await audit(redis, pool);
  });

  it('reserve picks the smallest qualifying UTXOs, leaving large ones for the splitter', async () => {
    const { pool } = newPool();
    await pool.add([{ txId: txId(), vout: 0, satoshis: 5_000_000 }, ...utxos(1, 1000), ...utxos(1, 300)]);
    const r = await pool.reserve({ minSatoshis: 500 });
    expect(r.status === 'reserved' && r.utxos[0]!.satoshis).toBe(1000);
  });

  it('an expired lease returns to free (sweep, or the next reserve) and its owner can no longer commit it', async () => {
    const { pool, clock } = newPool();
    const [a, b] = utxos(2);
    await pool.add([a!, b!]);
    const r1 = await pool.reserve({ owner: 'dead-writer', count: 2, leaseMs: 1000 });
    expect(r1.status).toBe('reserved');
    clock.advance(999);
    expect(await pool.sweep()).toBe(0);
    clock.advance(2);
    expect(await pool.sweep()).toBe(2);
    let status = await audit(redis, pool);
    expect(status.free.count).toBe(2);
    expect(status.leased.count).toBe(0);
    // The dead writer comes back: its commit is refused and changes nothing.
    expect(await pool.commit({ txId: txId(), owner: 'dead-writer', inputs: [a!], outputs: [] })).toBe('LEASE_LOST');
    expect((await audit(redis, pool)).free.count).toBe(2);

    // reserve() itself sweeps expired leases first.
    const r2 = await pool.reserve({ owner: 'w2', count: 2, leaseMs: 1000 });
    expect(r2.status).toBe('reserved');
    clock.advance(1001);
    const r3 = await pool.reserve({ owner: 'w3', count: 2 });
    expect(r3.status === 'reserved' && r3.utxos.map(toOutpoint).sort()).toEqual([a!, b!].map(toOutpoint).sort());
    status = await audit(redis, pool);
    expect(status.leased.count).toBe(2);
  });

  it('release returns only the caller’s own leases', async () => {
    const { pool } = newPool();
    await pool.add(utxos(2));
    const r = await pool.reserve({ owner: 'a', count: 2 });
    if (r.status !== 'reserved') throw new Error('expected a reservation');
    expect(await pool.release('someone-else', r.utxos)).toBe(0);
    expect(await pool.release('a', [r.utxos[0]!])).toBe(1);
    expect(await pool.release('a', [r.utxos[0]!])).toBe(0);
    const status = await audit(redis, pool);
    expect(status.free.count).toBe(1);
    expect(status.leased.count).toBe(1);
  });

  it('add skips outpoints the pool already tracks in any state', async () => {
    const { pool } = newPool();
    const u = utxos(2);
    expect(await pool.add(u)).toBe(2);
    expect(await pool.add(u)).toBe(0);
    const r = await pool.reserve({ owner: 'a' });
    if (r.status !== 'reserved') throw new Error('expected a reservation');
    await pool.commit({ txId: txId(), owner: 'a', inputs: r.utxos, outputs: [] });
    expect(await pool.add(u)).toBe(0);
    await expect(pool.add([{ txId: 'zz', vout: 0, satoshis: 1 }])).rejects.toThrow(/bad txId/);
    expect((await audit(redis, pool)).free.count).toBe(1);
  });

  it('commit → confirm: inputs spent then forgotten, change pending then free; balances exact at every step', async () => {
    const { pool } = newPool();
    await pool.add([...utxos(3, 1000)]);
    const r = await pool.reserve({ owner: 'w', count: 2 });
    if (r.status !== 'reserved') throw new Error('expected a reservation');
    const id = txId();
    const change = { txId: id, vout: 3, satoshis: 1900 };
    expect(await pool.commit({ txId: id, owner: 'w', inputs: r.utxos, outputs: [change] })).toBe('OK');
    expect(await pool.commit({ txId: id, owner: 'w', inputs: r.utxos, outputs: [change] })).toBe('EXISTS');
    let s = await audit(redis, pool);
    expect(s).toMatchObject({
      free: { count: 1, satoshis: 1000 },
      leased: { count: 0 },
      pending: { count: 1, satoshis: 1900 },
      spentUnconfirmed: { count: 2, satoshis: 2000 },
      unsettledTransactions: 1,
    });
    expect(s.balance).toBe(2900);
    expect(await redis.hget(pool.keys.spent, toOutpoint(r.utxos[0]!))).toBe(id);
    // Pending change is not reservable.
    expect(await pool.reserve({ count: 2 })).toEqual({ status: 'exhausted', available: 1 });

    expect(await pool.confirm(id)).toBe(1);
    expect(await pool.confirm(id)).toBeNull();
    s = await audit(redis, pool);
    expect(s).toMatchObject({
      free: { count: 2, satoshis: 2900 },
      pending: { count: 0, satoshis: 0 },
      spentUnconfirmed: { count: 0, satoshis: 0 },
      unsettledTransactions: 0,
    });
    expect(await redis.exists(pool.keys.tx(id))).toBe(0);
  });

  it('confirmMany settles the unsettled transactions of a batch in one call and leaves settled, failed and unknown ones alone', async () => {
    const { pool } = newPool();
    await pool.add(utxos(6, 1000));
    /** Commits a transaction spending one free UTXO, with `changes` change outputs of 400 sats. */
    const commitOne = async (changes: number) => {
      const input = (await pool.sampleFree({ count: 1, minSatoshis: 1 }))[0];
      if (!input) throw new Error('expected a free UTXO');
      const id = txId();
      const outputs = Array.from({ length: changes }, (_, vout) => ({ txId: id, vout, satoshis: 400 }));
      expect(await pool.commit({ txId: id, owner: FROM_FREE, inputs: [input], outputs })).toBe('OK');
      return id;
    };
    const [a, b, c, confirmed, failed] = [
      await commitOne(1),
      await commitOne(2),
      await commitOne(0),
      await commitOne(1),
      await commitOne(1),
    ];
    expect(await pool.confirm(confirmed as string)).toBe(1);
    expect(await pool.fail(failed as string, { releaseInputs: true })).toBe(1);
    const unknown = txId();

    expect(await pool.confirmMany([a, unknown, b, confirmed, c, failed, a] as string[])).toEqual([
      1,
      null,
      2,
      null,
      0,
      null,
      null, // the same txId again in one batch: settled by its first occurrence
    ]);
    const s = await audit(redis, pool);
    expect(s).toMatchObject({
      // 1 UTXO never spent, the failed one's input released, 1 + 2 + 1 change outputs of 400 sats.
      free: { count: 6, satoshis: 2000 + 4 * 400 },
      pending: { count: 0, satoshis: 0 },
      spentUnconfirmed: { count: 0, satoshis: 0 },
      unsettledTransactions: 0,
    });
    for (const id of [a, b, c] as string[]) expect(await redis.exists(pool.keys.tx(id))).toBe(0);
    expect(await pool.confirmMany([])).toEqual([]);
    expect(await pool.confirmMany([a as string])).toEqual([null]);
  });

  it('fail: pending outputs dropped; inputs back to free only when releasable, else dropped', async () => {
    const { pool } = newPool();
    await pool.add(utxos(4, 1000));
    const commitOne = async () => {
      const r = await pool.reserve({ owner: 'w', count: 2 });
      if (r.status !== 'reserved') throw new Error('expected a reservation');
      const id = txId();
      expect(
        await pool.commit({ txId: id, owner: 'w', inputs: r.utxos, outputs: [{ txId: id, vout: 1, satoshis: 1500 }] }),
      ).toBe('OK');
      return id;
    };
    const released = await commitOne();
    expect(await pool.fail(released, { releaseInputs: true })).toBe(2);
    let s = await audit(redis, pool);
    expect(s).toMatchObject({
      free: { count: 4, satoshis: 4000 },
      pending: { count: 0 },
      spentUnconfirmed: { count: 0 },
    });

    const dropped = await commitOne();
    expect(await pool.fail(dropped, { releaseInputs: false })).toBe(0);
    expect(await pool.fail(dropped, { releaseInputs: true })).toBeNull();
    s = await audit(redis, pool);
    expect(s).toMatchObject({
      free: { count: 2, satoshis: 2000 },
      pending: { count: 0 },
      spentUnconfirmed: { count: 0 },
      balance: 2000,
    });
  });

  it('a commit FROM_FREE spends free UTXOs without a reservation, and answers TAKEN once one is not free', async () => {
    const { pool } = newPool();
    const [a, b, c] = utxos(3);
    await pool.add([a!, b!, c!]);
    const id = txId();
    expect(
      await pool.commit({ txId: id, owner: FROM_FREE, inputs: [a!], outputs: [{ txId: id, vout: 1, satoshis: 900 }] }),
    ).toBe('OK');
    let s = await audit(redis, pool);
    expect(s).toMatchObject({
      free: { count: 2 },
      leased: { count: 0 },
      spentUnconfirmed: { count: 1, satoshis: 1000 },
      pending: { count: 1, satoshis: 900 },
    });
    expect(await redis.hget(pool.keys.spent, toOutpoint(a!))).toBe(id);

    // The same UTXO again (another writer's stale sample): refused, nothing changed.
    const prefixOf = pool.keys.free.replace(/:wallet:free$/, '');
    const before = await snapshot(redis, prefixOf);
    expect(await pool.commit({ txId: txId(), owner: FROM_FREE, inputs: [a!], outputs: [] })).toBe('TAKEN');
    expect(await snapshot(redis, prefixOf)).toEqual(before);
    // A UTXO that another writer reserved meanwhile is not free either.
    const r = await pool.reserve({ owner: 'writer', minSatoshis: 1 });
    if (r.status !== 'reserved') throw new Error('expected a reservation');
    expect(await pool.commit({ txId: txId(), owner: FROM_FREE, inputs: [r.utxos[0]!], outputs: [] })).toBe('TAKEN');
    await pool.release('writer', r.utxos);
    expect(await redis.zrange(pool.keys.free, 0, -1)).toEqual([toOutpoint(b!), toOutpoint(c!)].sort());
    // Two inputs, one of them gone: all or nothing.
    expect(await pool.commit({ txId: txId(), owner: FROM_FREE, inputs: [b!, a!], outputs: [] })).toBe('TAKEN');
    s = await audit(redis, pool);
    expect(s.free.count).toBe(2);
    // A failed FROM_FREE transaction gives its inputs back to free like a leased one.
    expect(await pool.fail(id, { releaseInputs: true })).toBe(1);
    expect((await audit(redis, pool)).free.count).toBe(3);
  });

  it('sampleFree: a random window of the free UTXOs within the bounds, reserving nothing', async () => {
    const { pool } = newPool();
    await pool.add([...utxos(100, 1000), ...utxos(5, 50), ...utxos(3, 500_000)]);
    const seen = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const sample = await pool.sampleFree({ count: 10, minSatoshis: 100, belowSatoshis: 2000 });
      expect(sample).toHaveLength(10);
      for (const u of sample) expect(u.satoshis).toBe(1000);
      seen.add(sample.map(toOutpoint).join());
    }
    // random windows: eight samples of 10 from 100 are not all the same window
    expect(seen.size).toBeGreaterThan(1);
    expect(await pool.sampleFree({ count: 500, minSatoshis: 100 })).toHaveLength(103);
    expect(await pool.sampleFree({ count: 5, minSatoshis: 600_000 })).toEqual([]);
    expect((await audit(redis, pool)).leased.count).toBe(0);
  });

  it('the commit contract embedded in another script moves a record and its funding together, or neither', async () => {
    const { pool, clock } = newPool();
    await pool.add(utxos(1));
    // A stand-in for a records accept script, loaded the way the records lib loads its scripts:
    // KEYS[1] the record hash, the pool's 9 keys from KEYS[2]; ARGV[1] data, the pool's 7 from ARGV[2].
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pl-wallet-lua-'));
    fs.writeFileSync(
      path.join(dir, 'test-accept-with-funding-10.lua'),
      `local refused = pool_check(KEYS, 2, ARGV, 2)
      if refused then return refused end
      redis.call('HSET', KEYS[1], 'data', ARGV[1])
      pool_apply(KEYS, 2, ARGV, 2)
      return 'OK'`,
    );
    expect(loadLuaCommands(redis, dir, { prelude: poolCommitLua() })).toEqual(['testAcceptWithFunding']);
    const accept = (
      redis as unknown as { testAcceptWithFunding(...args: string[]): Promise<string> }
    ).testAcceptWithFunding.bind(redis);
    const run = (recordKey: string, commit: Parameters<FundingPool['commitArgs']>[0]) =>
      accept(recordKey, ...pool.commitKeys(commit.txId), 'payload', ...pool.commitArgs(commit));
    const r = await pool.reserve({ owner: 'writer', leaseMs: 1000 });
    if (r.status !== 'reserved') throw new Error('expected a reservation');
    const id = txId();
    const recordKey = `${pool.keys.free}:test-record:${id}`;
    clock.advance(1001);
    await pool.sweep();
    expect(await run(recordKey, { txId: id, owner: 'writer', inputs: r.utxos, outputs: [] })).toBe('LEASE_LOST');
    expect(await redis.exists(recordKey)).toBe(0);

    const r2 = await pool.reserve({ owner: 'writer2' });
    if (r2.status !== 'reserved') throw new Error('expected a reservation');
    expect(
      await run(recordKey, {
        txId: id,
        owner: 'writer2',
        inputs: r2.utxos,
        outputs: [{ txId: id, vout: 2, satoshis: 700 }],
      }),
    ).toBe('OK');
    expect(await redis.hget(recordKey, 'data')).toBe('payload');
    expect(await audit(redis, pool)).toMatchObject({
      spentUnconfirmed: { count: 1, satoshis: 1000 },
      pending: { count: 1, satoshis: 700 },
    });
    await redis.del(recordKey);
  });
});

describe('FundingPool sharded by records partition (real Redis)', () => {
  const prefix = uniquePrefix('shards');
  const { redis, cleanup } = testRedis(prefix);
  let n = 0;
  const newPool = (partitions = 4) =>
    new FundingPool(redis, {
      prefix: `${prefix}:${++n}`,
      address: 'mtest',
      clock: new ManualClock('2026-11-01T00:00:00Z'),
      partitions,
    });
  afterAll(cleanup);

  it('deposits go to the emptiest shards, once whatever the shard; figures are summed', async () => {
    const pool = newPool(4);
    expect(await pool.add(utxos(8, 1000))).toBe(8);
    expect(await pool.freeSatoshisByShard()).toEqual([2000, 2000, 2000, 2000]);
    // One large deposit fills the emptiest shard; the next ones go elsewhere.
    await pool.add([{ txId: txId(), vout: 0, satoshis: 10_000 }]);
    const deposits = utxos(3, 1000);
    expect(await pool.add(deposits)).toBe(3);
    expect((await pool.freeSatoshisByShard()).sort((a, b) => a - b)).toEqual([3000, 3000, 3000, 12_000]);
    // Already tracked in some shard: skipped.
    expect(await pool.add(deposits)).toBe(0);
    expect((await pool.status()).free).toEqual({ count: 12, satoshis: 21_000 });
    expect(await pool.denominatedCount(1000)).toBe(11);
  });

  it('moveFree takes free UTXOs out of one shard into another; a move cut short is finished by finishMoves (one finisher a shard), once, even after the UTXO was spent there', async () => {
    const clock = new ManualClock('2026-11-01T00:00:00Z');
    const pool = new FundingPool(redis, { prefix: `${prefix}:${++n}`, address: 'mtest', clock, partitions: 2 });
    const [a, b] = pool.partitions.units as [string, string];
    await pool.add(utxos(4, 1000), { partition: a });
    expect(await pool.moveFree(a, b, { count: 3, minSatoshis: 1000, belowSatoshis: 2000 })).toBe(3);
    expect(await pool.freeSatoshisByShard()).toEqual([1000, 3000]);
    expect([await redis.exists(pool.keysOf(a).moving), await redis.exists(pool.keysOf(b).arrived)]).toEqual([0, 0]);
    // A mover that died after taking UTXOs out: noted in `moving`, in no shard's free set.
    const raw = redis as unknown as {
      walletMoveOut(...args: string[]): Promise<string[]>;
      walletArrive(...args: string[]): Promise<number>;
    };
    const kb = pool.keysOf(b);
    const cut = await raw.walletMoveOut(
      kb.free,
      kb.sats,
      kb.counters,
      kb.moving,
      a,
      '1000',
      '+inf',
      '2',
      String(clock.now().getTime()),
    );
    expect(cut).toHaveLength(4);
    expect((await pool.status()).free.count).toBe(2);
    // While another finisher holds the shard's move lock, the notes wait for it.
    await redis.set(kb.moveLock, 'other', 'PX', 60_000);
    expect(await pool.finishMoves()).toBe(0);
    await redis.del(kb.moveLock);
    expect(await pool.finishMoves()).toBe(2);
    expect([await redis.exists(kb.moving), await redis.exists(pool.keysOf(a).arrived)]).toEqual([0, 0]);
    expect(await pool.freeSatoshisByShard()).toEqual([3000, 1000]);
    expect((await pool.status()).free).toEqual({ count: 4, satoshis: 4000 });

    // A finisher killed after adding a UTXO to its destination, before dropping the note: the UTXO
    // is spent and settled there meanwhile; the next finisher must not add it again.
    const ka = pool.keysOf(a);
    const [op, sats] = (await raw.walletMoveOut(
      ka.free,
      ka.sats,
      ka.counters,
      ka.moving,
      b,
      '1000',
      '+inf',
      '1',
      String(clock.now().getTime()),
    )) as [string, string];
    expect(await raw.walletArrive(kb.free, kb.sats, kb.counters, kb.arrived, op, sats)).toBe(1);
    const spender = txId();
    const [, vout] = op.split(':');
    const spent = { txId: op.split(':')[0] as string, vout: Number(vout), satoshis: Number(sats) };
    expect(await pool.commit({ txId: spender, owner: FROM_FREE, inputs: [spent], outputs: [], partition: b })).toBe(
      'OK',
    );
    expect(await pool.confirm(spender)).toBe(0);
    expect(await pool.finishMoves()).toBe(0);
    expect([await redis.exists(ka.moving), await redis.exists(kb.arrived)]).toEqual([0, 0]);
    expect(await redis.zscore(kb.free, op)).toBeNull();
    expect((await pool.status()).free).toEqual({ count: 3, satoshis: 3000 });
  });

  it('a commit in a shard is confirmed there by another process, which finds the shard through the txId index', async () => {
    const pool = newPool(4);
    const unit = pool.partitions.unit(2);
    await pool.add(utxos(2, 1000), { partition: unit });
    const r = await pool.reserve({ owner: 'w', minSatoshis: 1000, partition: unit });
    if (r.status !== 'reserved') throw new Error('expected a reservation');
    const id = txId();
    const change = { txId: id, vout: 1, satoshis: 900 };
    expect(await pool.commit({ txId: id, owner: 'w', inputs: r.utxos, outputs: [change], partition: unit })).toBe('OK');
    expect(await redis.zscore(pool.keysOf(unit).txs, id)).not.toBeNull();
    expect(await pool.index.lookupOne(id)).toBe(unit);
    // Another process (its own index cache) confirms it: the change is free in the same shard.
    const other = new FundingPool(redis, { prefix: pool.partitions.prefix, address: 'mtest', partitions: 4 });
    expect(await other.confirmMany([id, txId()])).toEqual([1, null]);
    expect(await redis.zscore(pool.keysOf(unit).free, toOutpoint(change))).toBe('900');
    expect((await pool.unsettled(10)).map((t) => t.txId)).toEqual([]);
  });
});
