import { recordsKeys } from '@proofline/records-data-access';
import { fundPool } from '@proofline/records-testing';
import { ManualClock } from '@proofline/shared-config';
import { keyTag, txShard, txShardTag } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import { keysMatching, testRedis, uniquePrefix } from '@proofline/shared-testing';
import { memoryRecords } from './testing/memory-records';

const caller = { tenant: 't1' };
const body = (s: string) => ({ body: Buffer.from(s), encode: undefined, updateToken: undefined });

/** Every key under `prefix` with its DUMP, to prove that nothing at all changed. */
async function dumpAll(redis: RedisClient, prefix: string): Promise<Record<string, string>> {
  const keys = await keysMatching(redis, `${prefix}:*`);
  const out: Record<string, string> = {};
  for (const k of keys) out[k] = ((await redis.dumpBuffer(k)) ?? Buffer.alloc(0)).toString('hex');
  return out;
}

/*
 * The scripts that walk a chain take every key they touch from their caller (Redis Cluster): the
 * chain list and, for revive, the successors' records, learned on a first call; the unconfirmed
 * depth cap reads the proof store (another unit, another slot) between two calls of the accept
 * script. What the specs of the publisher and of the API rely on must hold from any record of a
 * chain, whatever the caller knew before.
 */
describe('chain walks with the keys known up front (settle, revive, navigate, the depth cap)', () => {
  const prefix = uniquePrefix('walks');
  const { redis, cleanup } = testRedis(prefix);
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  afterAll(cleanup);

  let n = 0;
  async function setup(env: Record<string, string> = {}, confirmedIndexOf?: (p: string) => (txId: string) => string) {
    const p = `${prefix}-${++n}`;
    const confirmedIndexKeyOf = confirmedIndexOf?.(p);
    const records = memoryRecords(redis, p, clock, {
      env,
      ...(confirmedIndexKeyOf === undefined ? {} : { confirmedIndexKeyOf }),
    });
    await fundPool(records.pool, 20, 1000);
    /** A create and `updates` updates by the owning tenant: the chain's txIds in order. */
    const chain = async (updates: number): Promise<string[]> => {
      const ids = [(await records.writes.createLinked(caller, body('v0'))).txId];
      for (let v = 1; v <= updates; v++)
        ids.push((await records.writes.updateLinked(caller, ids.at(-1) as string, body(`v${v}`))).txId);
      return ids;
    };
    return { p, keys: recordsKeys(p), store: records.store, writes: records.writes, chain, confirmedIndexKeyOf };
  }

  it('settle reports every pending successor, in chain order, from any record, up to the limit; the walk stops at a settled one', async () => {
    const { store, chain } = await setup();
    const [root, v1, v2, v3, v4] = (await chain(4)) as [string, string, string, string, string];
    // v3 published first: the walk from v1 stops before it.
    expect(await store.settle(v3, clock.now(), undefined, 50, root)).toEqual({ changed: true, successors: [v4] });
    // From v1 without its chain (the store learns it from the script): v2 only.
    expect(await store.settle(v1, clock.now())).toEqual({ changed: true, successors: [v2] });
    expect(await store.settle(v1, clock.now())).toEqual({ changed: false, successors: [] });
    // The limit, and a root (its own chain).
    const [r, ...rest] = await chain(3);
    expect(await store.settle(r as string, clock.now(), undefined, 2)).toEqual({
      changed: true,
      successors: rest.slice(0, 2),
    });
    // A failure reports the pending successors the same way, and leaves the outbox.
    const [f, f1] = (await chain(1)) as [string, string];
    expect(await store.settle(f, clock.now(), 'REJECTED: 461')).toEqual({ changed: true, successors: [f1] });
    expect(await store.meta(f)).toMatchObject({ state: 'failed', failure: 'REJECTED: 461' });
    expect((await store.dueOutbox(new Date(8.64e15), 1000)).includes(f)).toBe(false);
    expect(await store.state(root)).toBe('pending');
  });

  it('revive puts back the successors failed because of the record, from any record of a chain; a chain that grew between calls is re-read', async () => {
    const { keys, store, chain, writes } = await setup();
    const [, v1, v2, v3, v4] = (await chain(4)) as [string, string, string, string, string];
    await store.settle(v1, clock.now(), 'REJECTED: 461');
    await store.settle(v2, clock.now(), 'PREVIOUS_REJECTED: its previous record was rejected');
    await store.settle(v3, clock.now(), 'PREVIOUS_REJECTED: its previous record was rejected');
    await store.settle(v4, clock.now(), 'REJECTED: 465 for a reason of its own');
    const at = new Date(clock.now().getTime() + 1000);
    expect(await store.revive(v1, at, 'PREVIOUS_REJECTED')).toEqual({ changed: true, successors: [v2, v3] });
    expect(await store.meta(v1)).toMatchObject({ state: 'published', failure: null });
    for (const txId of [v2, v3]) {
      expect(await store.meta(txId)).toMatchObject({ state: 'pending', failure: null });
      expect(await redis.zscore(keys.outbox, txId)).toBe(String(at.getTime()));
    }
    expect(await store.meta(v4)).toMatchObject({ state: 'failed' });
    expect(await redis.zscore(keys.outbox, v4)).toBeNull();
    expect(await store.revive(v1, at, 'PREVIOUS_REJECTED')).toEqual({ changed: false, successors: [] });

    // A failed end record revived after an update was accepted on it: the update is pending, not
    // failed, so the walk stops there; the record alone is revived.
    const [c0, c1] = (await chain(1)) as [string, string];
    await store.settle(c1, clock.now(), 'REJECTED: 461');
    const late = await writes.updateLinked(caller, c1, body('after the failure'));
    expect(await store.revive(c1, at, 'PREVIOUS_REJECTED')).toEqual({ changed: true, successors: [] });
    expect(await store.state(late.txId)).toBe('pending');
    expect(await store.state(c0)).toBe('pending');
  });

  it('reviveMany revives only the failed records of a batch, each with its successors; the others and unknown txIds are left as they were', async () => {
    const { keys, store, chain } = await setup();
    const [root, v1, v2] = (await chain(2)) as [string, string, string];
    const [published] = (await chain(0)) as [string];
    const [pending] = (await chain(0)) as [string];
    const [alone] = (await chain(0)) as [string];
    await store.settle(root, clock.now(), 'INVALID_TX: ARC 465: fee too low');
    await store.settle(v1, clock.now(), 'PREVIOUS_REJECTED: its previous record was rejected');
    await store.settle(v2, clock.now(), 'PREVIOUS_REJECTED: its previous record was rejected');
    await store.settle(published, clock.now());
    await store.settle(alone, clock.now(), 'INVALID_TX: ARC 465: fee too low');
    const unknown = 'e'.repeat(64);
    const before = { published: await store.meta(published), pending: await store.meta(pending) };
    const at = new Date(clock.now().getTime() + 1000);

    const revived = await store.reviveMany([published, root, unknown, pending, alone], at, 'PREVIOUS_REJECTED');
    expect(revived).toEqual([
      { txId: root, successors: [v1, v2] },
      { txId: alone, successors: [] },
    ]);
    for (const txId of [root, alone])
      expect(await store.meta(txId)).toMatchObject({ state: 'published', failure: null });
    for (const txId of [v1, v2]) {
      expect(await store.meta(txId)).toMatchObject({ state: 'pending', failure: null });
      expect(await redis.zscore(keys.outbox, txId)).toBe(String(at.getTime()));
    }
    expect(await store.meta(published)).toEqual(before.published);
    expect(await store.meta(pending)).toEqual(before.pending);
    expect(await store.meta(unknown)).toBeNull();
    expect(await store.reviveMany([root, alone, v1], at, 'PREVIOUS_REJECTED')).toEqual([]);
    expect(await store.reviveMany([], at, 'PREVIOUS_REJECTED')).toEqual([]);
    // The tenant lookup reads the same way (one field, no byte length).
    expect(await store.tenantsOf([root, unknown, alone])).toEqual([caller.tenant, null, caller.tenant]);
  });

  it('navigate from a create and from any later version', async () => {
    const { store, chain } = await setup();
    const ids = await chain(4);
    expect(await store.navigate(ids[0] as string, 2)).toEqual({
      status: 'OK',
      txIds: ids.slice(1, 3),
      endOfLinks: false,
    });
    expect(await store.navigate(ids[2] as string, 5)).toEqual({ status: 'OK', txIds: ids.slice(3), endOfLinks: true });
    expect(await store.navigate(ids[3] as string, -2)).toEqual({
      status: 'OK',
      txIds: [ids[2], ids[1]],
      endOfLinks: false,
    });
    expect(await store.navigate('e'.repeat(64), 1)).toEqual({ status: 'TX_NOT_FOUND' });
  });

  it('the depth cap reads the confirmed index under another tag between two accept calls: refused with nothing changed, then grows as versions are confirmed', async () => {
    const CAP = 3;
    // Where chain-arc keeps its inclusions: one hash per txId shard, each another slot than the records'.
    const { p, keys, writes, chain, confirmedIndexKeyOf } = await setup(
      { MAX_UNCONFIRMED_LINKS: String(CAP) },
      (p) => (txId) => `${txShardTag(p, 'atx', txShard(txId))}:arc:inc`,
    );
    const confirm = (txId: string) =>
      redis.hset((confirmedIndexKeyOf as (txId: string) => string)(txId), Buffer.from(txId, 'hex'), '1');
    const ids = await chain(CAP - 1);
    const update = (prev: string) => writes.updateLinked(caller, prev, body('one more'));
    const before = await dumpAll(redis, keyTag(p, 'rec'));
    await expect(update(ids.at(-1) as string)).rejects.toMatchObject({ errorCode: 'CHAIN_UNCONFIRMED_DEPTH' });
    expect(await dumpAll(redis, keyTag(p, 'rec'))).toEqual(before);

    // The first two versions confirmed: two more fit, and the newest confirmed position is cached.
    await confirm(ids[0] as string);
    await confirm(ids[1] as string);
    const v3 = (await update(ids.at(-1) as string)).txId;
    expect(await redis.hget(keys.record(ids[0] as string), 'minedPos')).toBe('1');
    const v4 = (await update(v3)).txId;
    await expect(update(v4)).rejects.toMatchObject({ errorCode: 'CHAIN_UNCONFIRMED_DEPTH' });
    await confirm(ids[2] as string);
    await update(v4);
    expect(await redis.hget(keys.record(ids[0] as string), 'minedPos')).toBe('2');
  });
});
