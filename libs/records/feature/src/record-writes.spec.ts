import { isExtendedFormat, sha256d, spentTxIds, standardFromExtended } from '@proofline/chain-domain';
import type { BuiltTransaction, TransactionBuilder } from '@proofline/chain-domain';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import { FundingPool, inputsReleasable } from '@proofline/chain-wallet';
import type { PoolStatus } from '@proofline/chain-wallet';
import { RecordStore, recordsKeys } from '@proofline/records-data-access';
import type { AcceptOptions, AcceptOutcome, NewRecord, PoolCommitCall } from '@proofline/records-data-access';
import { InMemoryChain, fundPool } from '@proofline/records-testing';
import { ManualClock, loadConfig } from '@proofline/shared-config';
import type { RedisClient } from '@proofline/shared-redis';
import { keysMatching, testRedis, testRedisClient, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { createRecords } from './records';
import { memoryRecords } from './testing/memory-records';
import { RecordWrites } from './record-writes';
import type { RecordFunding } from './record-writes';
import { keyTag } from '@proofline/shared-redis';

const caller = { tenant: 't1' };
const body = (s: string) => ({ body: Buffer.from(s), encode: undefined });

/** Every key under `prefix` with its DUMP, to prove that nothing at all changed. */
async function dumpAll(redis: RedisClient, prefix: string): Promise<Record<string, string>> {
  const keys = await keysMatching(redis, `${prefix}:*`);
  const out: Record<string, string> = {};
  for (const k of keys) out[k] = ((await redis.dumpBuffer(k)) ?? Buffer.alloc(0)).toString('hex');
  return out;
}

const counts = (s: PoolStatus) => ({
  free: s.free.count,
  leased: s.leased.count,
  spent: s.spentUnconfirmed.count,
  pending: s.pending.count,
});

describe('records writes funded from the wallet pool (real Redis)', () => {
  const prefix = uniquePrefix('recwrites');
  const { redis, cleanup } = testRedis(prefix);
  const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const store = new RecordStore(redis, prefix);
  afterAll(cleanup);

  /** A fresh pool under its own sub-prefix, so each test reads exact counters. */
  let n = 0;
  function setup(builder: TransactionBuilder = new InMemoryChain(), rate = 1) {
    const p = `${prefix}-${++n}`;
    const pool = new FundingPool(redis, { prefix: p, address: 'test', clock });
    const upkeepRequests: number[] = [];
    const funding: RecordFunding = {
      pool,
      feeRate: () => rate,
      requestUpkeep: async () => void upkeepRequests.push(1),
    };
    const enqueued: string[] = [];
    const records = createRecords({
      config,
      clock,
      redis,
      prefix: p,
      builder,
      funding,
      reader: new InMemoryChain(),
      queue: { enqueue: async (txId) => void enqueued.push(txId) },
    });
    return { p, pool, writes: records.writes, store: records.store, enqueued, upkeepRequests };
  }

  it('a write spends one pool UTXO in the accept step: leased → spent by its txId, change pending, one tx unsettled', async () => {
    const { pool, writes, store: st, enqueued } = setup();
    const [utxo] = await fundPool(pool, 1, 1000);
    const { txId } = await writes.writeIndependent(caller, body('hello'));
    expect(enqueued).toEqual([txId]);
    expect(await st.publication(txId)).toMatchObject({ state: 'pending' });
    expect(counts(await pool.status())).toEqual({ free: 0, leased: 0, spent: 1, pending: 1 });
    expect(await redis.hget(pool.keys.spent, `${utxo!.txId}:0`)).toBe(txId);
    const [unsettled] = await pool.unsettled();
    expect(unsettled).toMatchObject({ txId, kind: 'record', inputs: [`${utxo!.txId}:0`], outputs: [`${txId}:3=999`] });
  });

  it('empty pool: 503 FUNDING_EXHAUSTED with Retry-After, nothing at all stored, an upkeep requested', async () => {
    // The real builder at 100 sat/kB: a record needs more than the one 1-satoshi UTXO the pool holds.
    const { p, pool, writes, enqueued, upkeepRequests } = setup(new BsvTransactionBuilder(), 100);
    await pool.add([{ txId: 'ab'.repeat(32), vout: 0, satoshis: 1 }]);
    const before = await dumpAll(redis, p);
    expect(Object.keys(before).length).toBeGreaterThan(0);
    for (const write of [
      () => writes.writeIndependent(caller, body('x')),
      () => writes.createLinked(caller, body('y')),
    ]) {
      await expect(write()).rejects.toMatchObject({
        errorCode: 'FUNDING_EXHAUSTED',
        httpStatus: 503,
        headers: { 'Retry-After': '5' },
      });
    }
    expect(await dumpAll(redis, p)).toEqual(before);
    expect(enqueued).toEqual([]);
    expect(upkeepRequests.length).toBe(2);
  });

  it('a refused update (NOT_END, TOKEN_INVALID, FORBIDDEN) releases its UTXO: pool counters back, nothing stored', async () => {
    const { p, pool, writes } = setup();
    await fundPool(pool, 5, 1000);
    const created = await writes.createLinked(caller, body('v1'));
    await writes.updateLinked(caller, created.txId, { ...body('v2'), updateToken: created.updateToken });
    const after = counts(await pool.status());
    expect(after).toEqual({ free: 3, leased: 0, spent: 2, pending: 2 });
    const recordKeys = () => keysMatching(redis, `${keyTag(p, 'rec')}:records:*`);
    const stored = await recordKeys();

    await expect(
      writes.updateLinked(caller, created.txId, { ...body('late'), updateToken: created.updateToken }),
    ).rejects.toMatchObject({ errorCode: 'NOT_LINKED_RECORDS_END' });
    await expect(
      writes.deleteLinked(caller, created.txId, { updateToken: 'utk_' + 'A'.repeat(43) }),
    ).rejects.toMatchObject({ httpStatus: 400 });
    await expect(
      writes.deleteLinked({ tenant: 'other' }, created.txId, { updateToken: undefined }),
    ).rejects.toMatchObject({ errorCode: 'FORBIDDEN' });
    expect(counts(await pool.status())).toEqual(after);
    expect(await redis.zcard(pool.keys.leases)).toBe(0);
    expect(await recordKeys()).toEqual(stored);
  });

  it('LEASE_LOST: the first transaction is never stored or enqueued; the write builds again from a fresh reservation', async () => {
    const built: BuiltTransaction[] = [];
    const chain = new InMemoryChain();
    const recording: TransactionBuilder = {
      build: (r) => {
        const tx = chain.build(r);
        built.push(tx);
        return tx;
      },
      fundingNeeded: (r) => chain.fundingNeeded(r),
    };
    // Another process sweeps the expired lease between this write's build and its accept script.
    let sweeps = 0;
    class SlowStore extends RecordStore {
      override async acceptRoot(record: NewRecord, pool: PoolCommitCall, opts?: AcceptOptions): Promise<AcceptOutcome> {
        if (sweeps++ === 0) {
          clock.advance(31_000);
          await fundingPool.sweep();
        }
        return super.acceptRoot(record, pool, opts);
      }
    }
    const p = `${prefix}-lease`;
    const fundingPool = new FundingPool(redis, { prefix: p, address: 'test', clock });
    await fundPool(fundingPool, 1, 1000);
    const enqueued: string[] = [];
    const slow = new SlowStore(redis, p);
    const writes = new RecordWrites({
      config,
      clock,
      store: slow,
      builder: recording,
      funding: { pool: fundingPool, feeRate: () => 1 },
      queue: { enqueue: async (txId) => void enqueued.push(txId) },
    });

    const { txId } = await writes.writeIndependent(caller, body('retry me'));
    expect(built).toHaveLength(2);
    expect(txId).toBe(built[1]!.txId);
    expect(await slow.meta(built[0]!.txId)).toBeNull();
    expect(enqueued).toEqual([txId]);
    expect(counts(await fundingPool.status())).toEqual({ free: 0, leased: 0, spent: 1, pending: 1 });
    expect(await fundingPool.unsettled()).toEqual([expect.objectContaining({ txId })]);
  });

  it('a builder that repeats a txId gets EXISTS: an explicit 500 naming it, nothing stored twice, the second UTXO released', async () => {
    const chain = new InMemoryChain();
    const same: BuiltTransaction = {
      txId: 'ab'.repeat(32),
      rawTx: Uint8Array.of(0),
      linkOutput: null,
      fundingSpent: [],
      change: null,
      fee: 1,
    };
    const repeating: TransactionBuilder = { build: () => same, fundingNeeded: (r) => chain.fundingNeeded(r) };
    const { pool, writes, store: st, enqueued } = setup(repeating);
    await fundPool(pool, 2, 1000);
    expect((await writes.writeIndependent(caller, body('first'))).txId).toBe(same.txId);
    await expect(writes.writeIndependent(caller, body('second'))).rejects.toMatchObject({
      errorCode: 'INTERNAL_ERROR',
      httpStatus: 500,
      internalDetail: `accept: EXISTS for ${same.txId}`,
    });
    expect(enqueued).toEqual([same.txId]);
    expect(await st.outboxSize()).toBe(1);
    expect((await st.withBytes(same.txId))?.bytes.toString()).toBe('first');
    expect(counts(await pool.status())).toEqual({ free: 1, leased: 0, spent: 1, pending: 0 });
  });

  it('publication settles what a write committed: accepted → change free; rejected → input back only when releasable', async () => {
    const { pool, writes } = setup();
    const [a, b, c] = await fundPool(pool, 3, 1000);
    const outpoints = async () => new Set(await redis.zrange(pool.keys.free, 0, -1));
    const first = await writes.writeIndependent(caller, body('seen'));
    const second = await writes.writeIndependent(caller, body('script failed'));
    const third = await writes.writeIndependent(caller, body('input spent'));
    // ARC SEEN/MINED (what the publisher calls): the change is spendable by the next write.
    expect(await pool.confirm(first.txId)).toBe(1);
    expect(await outpoints()).toEqual(new Set([`${first.txId}:3`]));
    // 461 before the network saw it: the transaction can never be mined, its input returns to free.
    expect(
      await pool.fail(second.txId, { releaseInputs: inputsReleasable({ code: '461', reachedNetwork: false }) }),
    ).toBe(1);
    // 462 (an input missing or spent): the input may be spent already, it is dropped.
    expect(
      await pool.fail(third.txId, { releaseInputs: inputsReleasable({ code: '462', reachedNetwork: false }) }),
    ).toBe(0);
    const free = await outpoints();
    const spentBy = [a, b, c].map((u) => `${u!.txId}:0`).filter((op) => free.has(op));
    expect(spentBy).toHaveLength(1);
    expect(free.size).toBe(2);
    expect(counts(await pool.status())).toEqual({ free: 2, leased: 0, spent: 0, pending: 0 });
    // The freed change funds the next write.
    const next = await writes.writeIndependent(caller, body('from change'));
    expect((await pool.unsettled()).find((t) => t.txId === next.txId)?.inputs).toHaveLength(1);
  });

  it('the store refuses a pool step of the wrong shape (positions are fixed)', async () => {
    await expect(store.acceptRoot({} as NewRecord, { unit: 'rec', keys: ['a'], args: [] })).rejects.toThrow(
      /9 keys and 7 args/,
    );
  });

  it('stores the raw transaction once, binary, beside a compact record hash, and what EF adds beside it; records stored with rawTx in the hash, or without EF, still read', async () => {
    const { p, pool, writes, store: st } = setup(new BsvTransactionBuilder());
    await fundPool(pool, 3, 100_000);
    const independent = await writes.writeIndependent(caller, {
      body: Buffer.from('x'.repeat(1024)),
      encode: 'SHA256',
    });
    const created = await writes.createLinked(caller, body('v1'));
    const updated = await writes.updateLinked(caller, created.txId, {
      ...body('v2'),
      updateToken: created.updateToken,
    });
    for (const txId of [independent.txId, created.txId, updated.txId]) {
      const raw = (await redis.getBuffer(recordsKeys(p).tx(txId))) as Buffer;
      expect(Buffer.from(sha256d(raw)).reverse().toString('hex')).toBe(txId);
      expect(await redis.hexists(recordsKeys(p).record(txId), 'rawTx')).toBe(0);
      // every value is small enough for Redis's listpack encoding (~3x less memory than a hashtable)
      expect(['listpack', 'ziplist']).toContain(await redis.object('ENCODING', recordsKeys(p).record(txId)));
      expect(await st.rawTxMany([txId])).toEqual([raw]);
      expect((await st.receiptMaterial(txId))?.rawTx).toEqual(raw);
      // Publication sends the EF: the raw transaction with its stored extension, 34 bytes an input:
      // one input's in the record hash (still a listpack, checked above), two inputs' in the ef key.
      const inputs = spentTxIds(raw).length;
      const inHash = await redis.hgetBuffer(recordsKeys(p).record(txId), 'ef');
      const inKey = await redis.getBuffer(recordsKeys(p).ef(txId));
      expect(inputs === 1 ? [inHash !== null, inKey] : [inHash, inKey !== null]).toEqual(
        inputs === 1 ? [true, null] : [null, true],
      );
      const extension = (inHash ?? inKey) as Buffer;
      expect(extension).toHaveLength(34 * inputs);
      expect((await st.publication(txId))?.rawTx).toEqual(raw);
      const ef = (await st.publication(txId))!.broadcastTx;
      expect(isExtendedFormat(ef)).toBe(true);
      expect(ef).toHaveLength(raw.length + 6 + 34 * inputs);
      expect(Buffer.from(standardFromExtended(ef))).toEqual(raw);
    }
    // A record stored before EF (no extension): sent raw.
    await redis.hdel(recordsKeys(p).record(created.txId), 'ef');
    expect((await st.publication(created.txId))?.broadcastTx).toEqual(
      await redis.getBuffer(recordsKeys(p).tx(created.txId)),
    );
    // A record accepted before the tx key existed: its hex in the hash is what the readers answer.
    const legacy = independent.txId;
    const hex = ((await redis.getBuffer(recordsKeys(p).tx(legacy))) as Buffer).toString('hex');
    await redis.multi().del(recordsKeys(p).tx(legacy)).hset(recordsKeys(p).record(legacy), 'rawTx', hex).exec();
    expect(await st.rawTxMany([legacy, created.txId, 'ff'.repeat(32)])).toEqual([
      Buffer.from(hex, 'hex'),
      expect.any(Uint8Array),
      null,
    ]);
    await redis.hdel(recordsKeys(p).record(legacy), 'ef');
    expect((await st.publication(legacy))?.rawTx).toEqual(Buffer.from(hex, 'hex'));
    expect((await st.receiptMaterial(legacy))?.rawTx).toEqual(Buffer.from(hex, 'hex'));
  });

  it('stores no field whose value a reader assumes when it is absent; meta, navigate and updates answer the same', async () => {
    const { p, pool, writes, store: st } = setup(new BsvTransactionBuilder());
    await fundPool(pool, 4, 100_000);
    const independent = await writes.writeIndependent(caller, body('plain'));
    const typed = await writes.writeIndependent(caller, { body: Buffer.from('hashed'), encode: 'Base64|SHA256' });
    const created = await writes.createLinked(caller, body('v1'));
    const updated = await writes.updateLinked(caller, created.txId, {
      ...body('v2'),
      updateToken: created.updateToken,
    });
    const fields = async (txId: string) => (await redis.hkeys(recordsKeys(p).record(txId))).sort();
    for (const txId of [independent.txId, created.txId]) {
      for (const absent of ['chainId', 'position', 'contentType', 'failure'])
        expect(await fields(txId)).not.toContain(absent);
      expect(await st.meta(txId)).toMatchObject({
        chainId: txId,
        position: 0,
        contentType: 'application/octet-stream',
      });
    }
    // An independent record's family is its kind; a linked record's is stored.
    expect(await fields(independent.txId)).not.toContain('family');
    expect(await st.meta(independent.txId)).toMatchObject({ family: 'independent', kind: 'independent' });
    expect(await fields(created.txId)).toContain('family');
    // Times are stored as epoch milliseconds (an integer in the listpack) and read as ISO 8601;
    // an ISO string written before reads as it is.
    const at = await redis.hget(recordsKeys(p).record(independent.txId), 'acceptedAt');
    expect(at).toMatch(/^[0-9]{13}$/);
    expect((await st.meta(independent.txId))?.acceptedAt).toBe(new Date(Number(at)).toISOString());
    await redis.hset(recordsKeys(p).record(typed.txId), 'acceptedAt', '2025-05-05T05:05:05.005Z');
    expect((await st.meta(typed.txId))?.acceptedAt).toBe('2025-05-05T05:05:05.005Z');
    expect(await st.navigate(independent.txId, 1)).toMatchObject({ status: 'WRONG_FAMILY' });
    expect(await st.navigate('ee'.repeat(32), 1)).toMatchObject({ status: 'TX_NOT_FOUND' });
    expect(await fields(typed.txId)).not.toContain('contentType');
    expect(await st.meta(typed.txId)).toMatchObject({
      encoders: ['Base64', 'SHA256'],
      contentType: 'application/octet-stream; event-encoded=Base64|SHA256',
    });
    // Records stored with every field (before this layout) read as they did.
    await redis.hset(
      recordsKeys(p).record(independent.txId),
      'contentType',
      'text/plain',
      'chainId',
      independent.txId,
      'position',
      '0',
    );
    expect(await st.meta(independent.txId)).toMatchObject({
      contentType: 'text/plain',
      chainId: independent.txId,
      position: 0,
    });
    expect(await redis.hmget(recordsKeys(p).record(updated.txId), 'chainId', 'position')).toEqual([created.txId, '1']);
    expect(await st.meta(updated.txId)).toMatchObject({ chainId: created.txId, position: 1, prevTxId: created.txId });
    expect(await st.navigate(created.txId, 5)).toEqual({ status: 'OK', txIds: [updated.txId], endOfLinks: true });
    expect(await st.navigate(updated.txId, -5)).toEqual({ status: 'OK', txIds: [created.txId], endOfLinks: true });
    // Published: no empty failure written; failed: the failure is there.
    await st.settle(independent.txId, new Date(1_700_000_000_123));
    expect(await redis.hget(recordsKeys(p).record(independent.txId), 'settledAt')).toBe('1700000000123');
    expect(await fields(independent.txId)).not.toContain('failure');
    expect((await st.meta(independent.txId))?.failure).toBeNull();
    await st.settle(typed.txId, new Date(), 'REJECTED: 461');
    expect((await st.meta(typed.txId))?.failure).toBe('REJECTED: 461');
  });

  it('answers without waiting for the publication queue: with a queue that never answers, or fails, the record is accepted and waits in the outbox', async () => {
    const { p, pool } = setup();
    await fundPool(pool, 2, 1000);
    const funding: RecordFunding = { pool, feeRate: () => 1 };
    const writesWith = (enqueue: (txId: string) => Promise<void>) =>
      createRecords({
        config,
        clock,
        redis,
        prefix: p,
        builder: new InMemoryChain(),
        funding,
        reader: new InMemoryChain(),
        queue: { enqueue },
      }).writes;
    const hanging = await writesWith(() => new Promise<void>(() => undefined)).writeIndependent(
      caller,
      body('queue never answers'),
    );
    const failing = await writesWith(async () => {
      throw new Error('queue down');
    }).writeIndependent(caller, body('queue fails'));
    const st = new RecordStore(redis, p);
    for (const { txId } of [hanging, failing]) {
      expect(await st.state(txId)).toBe('pending');
      expect(await redis.zscore(recordsKeys(p).outbox, txId)).not.toBeNull();
    }
  });

  describe('funding taken straight from free (takeFromFree)', () => {
    /** A process's writes over `pool` (its own FreeFunding stock), recording what its builder built. */
    function freeProcess(p: string, pool: FundingPool, conn: RedisClient = redis) {
      const built: BuiltTransaction[] = [];
      const chain = new InMemoryChain();
      const builder: TransactionBuilder = {
        build: (r) => (built.push(chain.build(r)), built[built.length - 1]!),
        fundingNeeded: (r) => chain.fundingNeeded(r),
      };
      const enqueued: string[] = [];
      const upkeep: number[] = [];
      const funding: RecordFunding = {
        pool,
        feeRate: () => 1,
        requestUpkeep: async () => void upkeep.push(1),
        takeFromFree: { sample: 8, belowSatoshis: 2000 },
      };
      const records = createRecords({
        config,
        clock,
        redis: conn,
        prefix: p,
        builder,
        funding,
        reader: new InMemoryChain(),
        queue: { enqueue: async (txId) => void enqueued.push(txId) },
      });
      return { writes: records.writes, built, enqueued, upkeep };
    }

    it('a write spends a sampled free UTXO in its accept step, never leased: the same pool state as a reservation', async () => {
      const { p, pool, store: st } = setup();
      await fundPool(pool, 5, 1000);
      await fundPool(pool, 1, 500_000); // the splitter's reservoir: never sampled
      const { writes, enqueued } = freeProcess(p, pool);
      const txIds: string[] = [];
      for (const text of ['a', 'b', 'c']) txIds.push((await writes.writeIndependent(caller, body(text))).txId);
      expect(enqueued).toEqual(txIds);
      expect(counts(await pool.status())).toEqual({ free: 3, leased: 0, spent: 3, pending: 3 });
      expect(await redis.exists(pool.keys.leases, pool.keys.owners)).toBe(0);
      for (const txId of txIds) {
        // committed FROM_FREE (no lease owner), from the denomination
        expect(await redis.hget(pool.keys.tx(txId), 'owner')).toBe('');
        const [input] = (await pool.unsettled()).find((t) => t.txId === txId)?.inputs ?? [];
        expect(Number(await redis.hget(pool.keys.sats, input!))).toBe(1000);
        expect(await st.meta(txId)).toMatchObject({ kind: 'independent' });
      }
    });

    it('TAKEN: a UTXO another process spent first is never stored or enqueued; the write builds again with another', async () => {
      const { p, pool } = setup();
      await fundPool(pool, 3, 1000);
      const a = freeProcess(p, pool);
      const b = freeProcess(p, pool);
      // B samples all three and spends one; A samples the two left and spends the one B holds next.
      const first = await b.writes.writeIndependent(caller, body('b1'));
      const second = await a.writes.writeIndependent(caller, body('a'));
      const third = await b.writes.writeIndependent(caller, body('b2'));
      expect(b.built).toHaveLength(3);
      expect(third.txId).toBe(b.built[2]!.txId);
      expect(await new RecordStore(redis, p).meta(b.built[1]!.txId)).toBeNull();
      expect(b.enqueued).toEqual([first.txId, third.txId]);
      const unsettled = await pool.unsettled();
      expect(new Set(unsettled.map((t) => t.inputs[0])).size).toBe(3);
      expect(unsettled.map((t) => t.txId).sort()).toEqual([first.txId, second.txId, third.txId].sort());
      expect(counts(await pool.status())).toEqual({ free: 0, leased: 0, spent: 3, pending: 3 });
    });

    it('an empty free set falls back to a reservation: 503 FUNDING_EXHAUSTED, nothing stored; refused updates leave the pool as it was', async () => {
      const { p, pool } = setup();
      const { writes, upkeep } = freeProcess(p, pool);
      await expect(writes.writeIndependent(caller, body('x'))).rejects.toMatchObject({
        errorCode: 'FUNDING_EXHAUSTED',
        httpStatus: 503,
      });
      expect(upkeep).toHaveLength(1);
      expect(await keysMatching(redis, `${keyTag(p, 'rec')}:records:*`)).toEqual([]);
      await fundPool(pool, 3, 1000);
      // after the empty sample's back-off, the stock refills
      await new Promise((r) => setTimeout(r, 300));
      const created = await writes.createLinked(caller, body('v0'));
      const before = await dumpAll(redis, `${p}:wallet`);
      await expect(
        writes.updateLinked(caller, created.txId, { ...body('v1'), updateToken: 'utk_' + 'B'.repeat(43) }),
      ).rejects.toMatchObject({ errorCode: 'UPDATE_TOKEN_PARAM_INVALID' });
      expect(await dumpAll(redis, `${p}:wallet`)).toEqual(before);
    });

    it('50 concurrent writes over two processes and connections spend 50 distinct UTXOs of a pool of exactly 50', async () => {
      const { p, pool } = setup();
      await fundPool(pool, 50, 1000);
      const conns = [testRedisClient(), testRedisClient()];
      try {
        const procs = conns.map((c) => freeProcess(p, new FundingPool(c, { prefix: p, address: 'test', clock }), c));
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) => procs[i % 2]!.writes.writeIndependent(caller, body(`w${i}`))),
        );
        expect(new Set(results.map((r) => r.txId)).size).toBe(50);
        const unsettled = await pool.unsettled(100);
        expect(unsettled).toHaveLength(50);
        expect(new Set(unsettled.flatMap((t) => t.inputs)).size).toBe(50);
        expect(counts(await pool.status())).toEqual({ free: 0, leased: 0, spent: 50, pending: 50 });
        // every write that lost a race built again; none of its lost transactions was stored
        const st = new RecordStore(redis, p);
        const stored = new Set(results.map((r) => r.txId));
        for (const tx of procs.flatMap((x) => x.built))
          expect((await st.meta(tx.txId)) !== null).toBe(stored.has(tx.txId));
      } finally {
        conns.forEach((c) => c.disconnect());
      }
    });
  });

  it('link targets a process remembers: updates through two processes keep exactly one successor per record and the right chain', async () => {
    const { p, pool } = setup(new BsvTransactionBuilder());
    await fundPool(pool, 10, 100_000);
    const process = () =>
      createRecords({
        config,
        clock,
        redis,
        prefix: p,
        builder: new BsvTransactionBuilder(),
        funding: { pool, feeRate: () => 1 },
        reader: new InMemoryChain(),
        queue: { enqueue: async () => undefined },
      }).writes;
    const [a, b] = [process(), process()];
    const st = new RecordStore(redis, p);
    const root = await a.createLinked(caller, body('v0'));
    // B has never seen the root (it reads it); A remembers it from its own create.
    const v1 = await b.updateLinked(caller, root.txId, { ...body('v1'), updateToken: root.updateToken });
    await expect(
      a.updateLinked(caller, root.txId, { ...body('late'), updateToken: root.updateToken }),
    ).rejects.toMatchObject({ errorCode: 'NOT_LINKED_RECORDS_END', httpStatus: 409 });
    // A reads v1 (B wrote it), then goes on from what it remembers of its own writes.
    const v2 = await a.updateLinked(caller, v1.txId, { ...body('v2'), updateToken: v1.updateToken });
    const v3 = await a.updateLinked(caller, v2.txId, { ...body('v3'), updateToken: v2.updateToken });
    await expect(
      b.updateLinked(caller, v2.txId, { ...body('late'), updateToken: v2.updateToken }),
    ).rejects.toMatchObject({ errorCode: 'NOT_LINKED_RECORDS_END' });
    const end = await a.deleteLinked(caller, v3.txId, { updateToken: v3.updateToken });
    await expect(
      a.updateLinked(caller, end.txId, { ...body('after the end'), updateToken: undefined }),
    ).rejects.toMatchObject({ httpStatus: 409 });
    expect(await st.navigate(root.txId, 10)).toEqual({
      status: 'OK',
      txIds: [v1.txId, v2.txId, v3.txId, end.txId],
      endOfLinks: true,
    });
    for (const [i, { txId }] of [v1, v2, v3, end].entries())
      expect(await st.meta(txId)).toMatchObject({ chainId: root.txId, position: i + 1 });
    // A record of another family is refused, remembered or not.
    const plain = await a.writeIndependent(caller, body('independent'));
    await expect(
      a.updateLinked(caller, plain.txId, { ...body('x'), updateToken: root.updateToken }),
    ).rejects.toMatchObject({ errorCode: 'TX_INCORRECT_EVENT_TRANSACTION_TYPE' });
  });

  describe('partitioned (REDIS_PARTITIONS > 1)', () => {
    /** A process's records scope over a pool of `partitions` shards under a fresh sub-prefix. */
    function partitioned(partitions: number, env: Record<string, string> = {}) {
      const p = `${prefix}-${++n}`;
      return { p, ...memoryRecords(redis, p, clock, { partitions, env }) };
    }

    it("roots spread round robin, a chain stays in its create's partition with its funding, reads find both", async () => {
      const { p, pool, writes, store: st } = partitioned(4);
      await fundPool(pool, 40, 1000);
      expect((await pool.freeSatoshisByShard()).every((sats) => sats === 10_000)).toBe(true);
      const roots = await Promise.all(
        [1, 2, 3, 4, 5, 6, 7, 8].map((i) => writes.writeIndependent(caller, body(`r${i}`))),
      );
      const units = await st.partitionsOf(roots.map((r) => r.txId));
      expect(new Set(units).size).toBe(4);
      for (const unit of st.partitions.units) expect(units.filter((u) => u === unit)).toHaveLength(2);
      // Every record with its outbox entry and its funding commit in its partition's slot.
      for (const [i, { txId }] of roots.entries()) {
        const unit = units[i] as string;
        expect(await redis.zscore(recordsKeys(p, unit).outbox, txId)).not.toBeNull();
        expect(await redis.zscore(pool.keysOf(unit).txs, txId)).not.toBeNull();
      }
      const created = await writes.createLinked(caller, body('v1'));
      const home = await st.partitionOf(created.txId);
      let last = created;
      for (const v of ['v2', 'v3', 'v4']) {
        last = await writes.updateLinked(caller, last.txId, { ...body(v), updateToken: last.updateToken });
        expect(await st.partitionOf(last.txId)).toBe(home);
      }
      expect(await st.chain(created.txId)).toHaveLength(4);
      expect(await st.navigate(created.txId, 10)).toMatchObject({ status: 'OK', endOfLinks: true });
      // Another process (nothing cached) reads through the index; an unknown txId reads as absent.
      const other = new RecordStore(redis, p, { partitions: 4 });
      expect((await other.metaMany([created.txId, last.txId, 'ab'.repeat(32)])).map((m) => m?.chainId ?? null)).toEqual(
        [created.txId, created.txId, null],
      );
      expect(await other.meta('cd'.repeat(32))).toBeNull();
      // Confirm finds each transaction's shard: the change goes back there.
      expect(await pool.confirm(last.txId)).toBe(1);
      expect((await pool.status()).unsettledTransactions).toBe(11);
    });

    it('the txId index holds an entry for each accepted record and none for a refused one', async () => {
      const { p, pool, writes, store: st } = partitioned(4);
      await fundPool(pool, 40, 1000);
      const created = await writes.createLinked(caller, body('v1'));
      const root = await writes.writeIndependent(caller, body('r1'));
      // Eight racing updates of one record: one is accepted, seven are refused NOT_END by the
      // script (after their index entry was stored first, on a cluster).
      const race = await Promise.allSettled(
        [1, 2, 3, 4, 5, 6, 7, 8].map((i) =>
          writes.updateLinked(caller, created.txId, { ...body(`u${i}`), updateToken: created.updateToken }),
        ),
      );
      const won = race.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      await expect(
        writes.updateLinked(caller, created.txId, { ...body('bad'), updateToken: 'not-the-token' }),
      ).rejects.toMatchObject({ errorCode: 'UPDATE_TOKEN_PARAM_INVALID', httpStatus: 400 });
      const accepted = [created.txId, root.txId, (won[0] as PromiseFulfilledResult<{ txId: string }>).value.txId];
      // The index (every bucket's sub-buckets) holds exactly the three accepted records...
      const indexKeys = await keysMatching(redis, `${p}:{*}:pix:*`);
      const entries = (await Promise.all(indexKeys.map((key) => redis.hlen(key)))).reduce((a, b) => a + b, 0);
      expect(entries).toBe(3);
      // ...and another process, with nothing cached, finds each one's partition through it.
      const other = new RecordStore(redis, p, { partitions: 4 });
      expect(await other.partitionsOf(accepted)).toEqual(await st.partitionsOf(accepted));
      expect((await other.partitionsOf(accepted)).every((unit) => unit !== null)).toBe(true);
    });

    it("deferring a batch's outbox entries moves them in every partition, and only entries still there", async () => {
      const { p, pool, writes, store: st } = partitioned(4);
      await fundPool(pool, 40, 1000);
      const roots = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => writes.writeIndependent(caller, body(`d${i}`))));
      const ids = roots.map((r) => r.txId);
      const units = (await st.partitionsOf(ids)) as string[];
      expect(new Set(units).size).toBe(4);
      // The first one was settled meanwhile (out of its outbox).
      await redis.zrem(recordsKeys(p, units[0] as string).outbox, ids[0] as string);
      const until = new Date(clock.now().getTime() + 60_000);
      await st.deferSweep([...ids, 'ef'.repeat(32)], until);
      const scores = await Promise.all(ids.map((id, i) => redis.zscore(recordsKeys(p, units[i] as string).outbox, id)));
      expect(scores).toEqual([null, ...ids.slice(1).map(() => String(until.getTime()))]);
    });

    it('a chain whose shard ran dry is funded from the others; only a pool with nothing left answers 503', async () => {
      const { pool, writes, store: st } = partitioned(4);
      await fundPool(pool, 4, 1000);
      const created = await writes.createLinked(caller, body('v1'));
      const home = (await st.partitionOf(created.txId)) as string;
      // The chain's shard is empty now (one UTXO each): its updates take the others' UTXOs.
      let last = created;
      for (const v of ['v2', 'v3', 'v4']) {
        last = await writes.updateLinked(caller, last.txId, { ...body(v), updateToken: last.updateToken });
        expect(await st.partitionOf(last.txId)).toBe(home);
      }
      expect((await pool.status()).free.count).toBe(0);
      await expect(
        writes.updateLinked(caller, last.txId, { ...body('v5'), updateToken: last.updateToken }),
      ).rejects.toMatchObject({ errorCode: 'FUNDING_EXHAUSTED', httpStatus: 503 });
      await expect(writes.writeIndependent(caller, body('root'))).rejects.toMatchObject({
        errorCode: 'FUNDING_EXHAUSTED',
      });
      // A refused write left no index entry behind.
      expect(await st.chain(created.txId)).toHaveLength(4);
    });

    it('many concurrent roots over a thin pool spread over 64 shards all succeed while it holds a UTXO per writer', async () => {
      const { p, pool } = partitioned(64);
      // 72 UTXOs in every eighth shard (nine each; a pool upkeep has not evened out yet): the
      // four partitions a root tries first hold funding for about half of the roots, and the
      // others race each other for what is left.
      for (let shard = 0; shard < 64; shard += 8)
        await pool.add(
          Array.from({ length: 9 }, (_, i) => ({
            txId: sha256d(Buffer.from(`${p}-${shard}-${i}`)).toString('hex'),
            vout: 0,
            satoshis: 1000,
          })),
          { partition: pool.partitions.unit(shard) },
        );
      expect((await pool.status()).free.count).toBe(72);
      const conns = [testRedisClient(), testRedisClient()];
      try {
        // Two processes on their own connections: one reserves, one takes funding from free.
        const procs = conns.map((c, i) => {
          const own = new FundingPool(c, { prefix: p, address: 'test', clock, partitions: 64 });
          return createRecords({
            config,
            clock,
            redis: c,
            prefix: p,
            builder: new InMemoryChain(),
            funding: {
              pool: own,
              feeRate: () => 1,
              ...(i === 1 ? { takeFromFree: { sample: 4, belowSatoshis: 2000 } } : {}),
            },
            reader: new InMemoryChain(),
            queue: { enqueue: async () => undefined },
          }).writes;
        });
        const results = await Promise.allSettled(
          Array.from({ length: 72 }, (_, i) =>
            i % 4 === 3
              ? procs[i % 2]!.createLinked(caller, body(`c${i}`))
              : procs[i % 2]!.writeIndependent(caller, body(`w${i}`)),
          ),
        );
        expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason)).toEqual(
          [],
        );
        const unsettled = await pool.unsettled(200);
        expect(unsettled).toHaveLength(72);
        expect(new Set(unsettled.flatMap((t) => t.inputs)).size).toBe(72);
        expect(counts(await pool.status())).toEqual({ free: 0, leased: 0, spent: 72, pending: 72 });
        // The 73rd finds no shard with a UTXO: 503, having read the counters.
        await expect(procs[0]!.writeIndependent(caller, body('one too many'))).rejects.toMatchObject({
          errorCode: 'FUNDING_EXHAUSTED',
          httpStatus: 503,
        });
      } finally {
        conns.forEach((c) => c.disconnect());
      }
    });

    it('roots whose shards ran dry share one read of every shard to find the richest, and are all funded', async () => {
      const { pool, writes, store: st } = partitioned(8);
      // Funding in one shard only: a root tries its partition and the next three, so half of the
      // round robin's starting points miss it and go to the top-up.
      const rich = st.partitions.unit(0);
      await pool.add(
        Array.from({ length: 16 }, (_, i) => ({
          txId: `${i.toString(16).padStart(2, '0')}${'ab'.repeat(31)}`,
          vout: 0,
          satoshis: 1000,
        })),
        { partition: rich },
      );
      const read = jest.spyOn(pool, 'freeByShard');
      try {
        const roots = await Promise.all(
          Array.from({ length: 8 }, (_, i) => writes.writeIndependent(caller, body(`dry${i}`))),
        );
        expect(await st.partitionsOf(roots.map((r) => r.txId))).toEqual(roots.map(() => rich));
        // Four of the eight roots reached the top-up at once: one read served them.
        expect(read.mock.calls.length).toBeGreaterThanOrEqual(1);
        expect(read.mock.calls.length).toBeLessThan(4);
      } finally {
        read.mockRestore();
      }
      expect((await pool.status()).free.count).toBe(8);
    });

    it('a UTXO added right after a root found every shard empty funds the next root (the shared read is not trusted for "none")', async () => {
      const { pool, writes, store: st } = partitioned(16);
      // Every shard empty: 503, and the process now holds a fresh read of 16 empty shards.
      await expect(writes.writeIndependent(caller, body('dry'))).rejects.toMatchObject({
        errorCode: 'FUNDING_EXHAUSTED',
      });
      // A deposit lands in one shard at once (well within the shared read's 25 ms)...
      const rich = st.partitions.unit(7);
      await pool.add([{ txId: 'cd'.repeat(32), vout: 0, satoshis: 1000 }], { partition: rich });
      // ...and the next root, whose four partitions are not that one, is funded from it.
      const root = await writes.writeIndependent(caller, body('funded'));
      expect(await st.partitionsOf([root.txId])).toEqual([rich]);
      expect((await pool.status()).free.count).toBe(0);
    });

    it('back-pressure per partition: each outbox takes ceil(MAX_PENDING_PUBLICATIONS / P)', async () => {
      const { pool, writes, store: st } = partitioned(4, { MAX_PENDING_PUBLICATIONS: '6' });
      await fundPool(pool, 40, 1000);
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => writes.writeIndependent(caller, body(`bp${i}`))),
      );
      const accepted = results.filter((r) => r.status === 'fulfilled').length;
      // 2 per partition (ceil(6 / 4)); roots fall back to other partitions only for funding.
      expect(accepted).toBe(8);
      expect(await st.outboxSizes()).toEqual([2, 2, 2, 2]);
      const refused = results.find((r) => r.status === 'rejected');
      expect(refused?.status === 'rejected' && refused.reason).toMatchObject({ errorCode: 'PUBLICATION_BACKLOG_FULL' });
    });
  });
});
