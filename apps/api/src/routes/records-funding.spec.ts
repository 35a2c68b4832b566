import { Queue } from 'bullmq';
import { WALLET_UPKEEP_ON_DEMAND_ID } from '@proofline/chain-wallet';
import { fundPool } from '@proofline/records-testing';
import { QUEUES, bullKeyStart, bullPrefix } from '@proofline/shared-jobs';
import { startRecordsFixture } from '../testing/records-fixture';
import type { RecordsFixture } from '../testing/records-fixture';

/**
 * Funding over HTTP (the production composition): every write reserves one UTXO of the wallet's
 * pool in the same accept step that stores it. Empty pool: 503 FUNDING_EXHAUSTED with Retry-After,
 * nothing stored, an upkeep run requested from the wallet worker. A refused write gives its UTXO back.
 */
describe('records funded from the wallet pool', () => {
  let f: RecordsFixture;
  let upkeep: Queue;
  beforeAll(async () => {
    f = await startRecordsFixture({}, { fund: 0 });
    upkeep = new Queue(QUEUES.walletUpkeep, { connection: f.redis, prefix: bullPrefix(f.prefix, QUEUES.walletUpkeep) });
  });
  afterAll(async () => {
    await upkeep.close();
    await f.close();
  });

  /**
   * The content of every key under the test's prefix except BullMQ's (records, pool, chain), read
   * by type: a hash's fields may be re-ordered inside Redis (so DUMP bytes could differ) while the
   * stored state is the same. The pool is read as one: its shards' keys merged by name (counters
   * summed), as a write may move free UTXOs between shards (a chain's successor is funded in its
   * chain's partition) without changing what the pool holds.
   */
  async function dumpState(): Promise<Record<string, unknown>> {
    const keys = (await f.redis.keys(`${f.prefix}:*`)).filter((k) => !k.startsWith(bullKeyStart(f.prefix))).sort();
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const type = await f.redis.type(k);
      const pooled = /:wallet:(.*)$/.exec(k)?.[1];
      if (pooled !== undefined) {
        const name = `pool:${pooled}`;
        const prev = (out[name] ?? {}) as Record<string, string | number>;
        if (type === 'hash') {
          const fields = await f.redis.hgetall(k);
          if (pooled === 'counters')
            for (const [field, v] of Object.entries(fields))
              fields[field] = String(Number(prev[field] ?? 0) + Number(v));
          out[name] = { ...prev, ...fields };
        } else if (type === 'zset') {
          const flat = await f.redis.zrange(k, 0, -1, 'WITHSCORES');
          for (let i = 0; i < flat.length; i += 2) prev[flat[i] as string] = flat[i + 1] as string;
          out[name] = prev;
        } else out[name] = await f.redis.get(k);
        continue;
      }
      if (type === 'hash') out[k] = await f.redis.hgetall(k);
      else if (type === 'zset') out[k] = await f.redis.zrange(k, 0, -1, 'WITHSCORES');
      else if (type === 'list') out[k] = await f.redis.lrange(k, 0, -1);
      else if (type === 'set') out[k] = (await f.redis.smembers(k)).sort();
      else out[k] = await f.redis.get(k);
    }
    return out;
  }

  it('empty pool: 503 problem+json FUNDING_EXHAUSTED with Retry-After, nothing stored, upkeep requested', async () => {
    const before = await dumpState();
    for (const path of ['/api/v1/records', '/api/v1/linkedrecords']) {
      const res = await f.request('POST', path, { body: 'no funds' });
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await res.json()).toMatchObject({ errorCode: 'FUNDING_EXHAUSTED', status: 503 });
    }
    expect(await dumpState()).toEqual(before);
    expect(await f.recordKeys()).toEqual([]);
    expect(await upkeep.getJob(WALLET_UPKEEP_ON_DEMAND_ID)).toBeDefined();
  });

  it('once funded, a write spends one UTXO; a refused update gives its UTXO back (pool counters unchanged)', async () => {
    const pool = f.api.recordsScope.wallet.pool;
    await fundPool(pool, 3, 1000);
    const created = await f.request('POST', '/api/v1/linkedrecords', { body: 'v1' });
    expect(created.status).toBe(200);
    const { txId, updateToken } = (await created.json()) as { txId: string; updateToken: string };
    const updated = await f.request('POST', `/api/v1/linkedrecords/${txId}/update?updateToken=${updateToken}`, {
      body: 'v2',
    });
    expect(updated.status).toBe(200);
    const status = await pool.status();
    expect({ free: status.free.count, leased: status.leased.count, spent: status.spentUnconfirmed.count }).toEqual({
      free: 1,
      leased: 0,
      spent: 2,
    });
    // The writes answered before their publication job was added (it defers their outbox entries).
    await f.queue.idle();
    const before = await dumpState();

    const late = await f.request('POST', `/api/v1/linkedrecords/${txId}/update?updateToken=${updateToken}`, {
      body: 'late',
    });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ errorCode: 'NOT_LINKED_RECORDS_END' });
    const forbidden = await f.request('POST', `/api/v1/linkedrecords/${txId}/delete`, { key: 'writerB' });
    expect(forbidden.status).toBe(403);
    // Reserved, refused by the accept script, released: the same pool and records, field for field.
    expect(await dumpState()).toEqual(before);
  });
});
