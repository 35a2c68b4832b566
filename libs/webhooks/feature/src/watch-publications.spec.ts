import type { BroadcastVerdict, ChainPublisher } from '@proofline/chain-domain';
import { recordsKeys } from '@proofline/records-data-access';
import { systemClock } from '@proofline/shared-config';
import { randomBytes } from 'node:crypto';
import { TX_SHARDS, slotOf, txShard } from '@proofline/shared-redis';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { WebhookStore } from '@proofline/webhooks-data-access';
import { watchPublications } from './watcher';

const txIdOf = (i: number) => i.toString(16).padStart(64, 'a');

describe('watchPublications: the watch step before every submission (real Redis)', () => {
  const prefix = uniquePrefix('wh-watch');
  const { redis, cleanup } = testRedis(prefix);
  const store = new WebhookStore(redis, prefix);
  const records = recordsKeys(prefix);
  /** What the wrapped chain saw: each txId with whether it was already watched when submitted. */
  const submitted: { txId: string; watched: boolean }[] = [];
  const chain: ChainPublisher = {
    async submit(tx) {
      submitted.push({ txId: tx.txId, watched: (await redis.zscore(store.keys.watchOf(tx.txId), tx.txId)) !== null });
      return { kind: 'accepted', txId: tx.txId, status: 'SEEN_ON_NETWORK', mined: null } as BroadcastVerdict;
    },
  };
  const publisher = watchPublications(chain, { store, prefix, clock: systemClock });
  const rawTx = new Uint8Array([1, 2, 3]);

  beforeAll(async () => {
    const hook = { id: 'wh_1', url: 'https://example.test/hook', events: ['record.confirmed' as const] };
    const created = await store.createWebhook(
      { ...hook, tenant: 'with-hooks', secretSealed: 'sealed', createdAt: new Date().toISOString() },
      10,
    );
    expect(created).toBe('OK');
  });
  afterAll(cleanup);

  it('watches a record of a tenant with webhooks before submitting it, from the tenant the publisher passes: no read of the record', async () => {
    const txId = txIdOf(1);
    const send = jest.spyOn(redis, 'sendCommand');
    await publisher.submit({ txId, rawTx, tenant: 'with-hooks' });
    const commands = send.mock.calls.map(([command]) => command.name.replace(/^eval$/, 'evalsha')); // EVAL on a connection's first use
    send.mockRestore();
    // The tenant's webhooks checked under {wh}, then the add to the txId's watch shard (zscore: the test chain's own read).
    expect(commands.filter((c) => c !== 'zscore')).toEqual(['exists', 'zadd']);
    expect(submitted.at(-1)).toEqual({ txId, watched: true });
  });

  it("without a tenant, reads the record's tenant first (one HGET), then watches", async () => {
    const txId = txIdOf(2);
    await redis.hset(records.record(txId), 'tenant', 'with-hooks');
    const send = jest.spyOn(redis, 'sendCommand');
    await publisher.submit({ txId, rawTx });
    const commands = send.mock.calls.map(([command]) => command.name.replace(/^eval$/, 'evalsha')); // EVAL on a connection's first use
    send.mockRestore();
    expect(commands.filter((c) => c !== 'zscore')).toEqual(['hget', 'exists', 'zadd']);
    expect(submitted.at(-1)).toEqual({ txId, watched: true });
  });

  it('leaves records of tenants without webhooks, and unknown records, unwatched, and still submits them', async () => {
    const other = txIdOf(3);
    const unknown = txIdOf(4);
    await redis.hset(records.record(other), 'tenant', 'no-hooks');
    await publisher.submit({ txId: other, rawTx, tenant: 'no-hooks' });
    await publisher.submit({ txId: other, rawTx });
    await publisher.submit({ txId: unknown, rawTx });
    expect(submitted.slice(-3)).toEqual([
      { txId: other, watched: false },
      { txId: other, watched: false },
      { txId: unknown, watched: false },
    ]);
    expect(await store.watchedCount()).toBe(2);
    for (const txId of [txIdOf(1), txIdOf(2)])
      expect(await redis.zrange(store.keys.watchOf(txId), 0, -1)).toContain(txId);
  });

  it('spreads the watch set over the txId shards: due reads take from every shard, rewatch, unwatch and the count span them', async () => {
    const txIds = Array.from({ length: 300 }, () => randomBytes(32).toString('hex'));
    const before = await store.watchedCount();
    const t0 = new Date(Date.now() - 1000);
    await store.watch(txIds, t0);
    expect(await store.watchedCount()).toBe(before + 300);
    const shards = new Set(txIds.map(txShard));
    expect(shards.size).toBeGreaterThan(40);
    for (const txId of txIds.slice(0, 20)) {
      expect(await redis.zscore(store.keys.watchOf(txId), txId)).toBe(String(t0.getTime()));
      expect(store.keys.watchOf(txId)).toBe(store.keys.watch(txShard(txId)));
    }
    expect(new Set([...shards].map((s) => slotOf(store.keys.watch(s)))).size).toBe(shards.size);
    // A small limit still takes from every shard: ⌈limit / 64⌉ each, `more` while any had more.
    const small = await store.dueWatched(new Date(), 64);
    const smallShards = new Set(small.txIds.map(txShard));
    expect([...shards].filter((s) => !smallShards.has(s))).toEqual([]);
    expect(small.txIds.length).toBeLessThanOrEqual(TX_SHARDS);
    expect(small.more).toBe(true);
    const all = await store.dueWatched(new Date(), 64 * 300);
    expect(all.txIds.filter((t) => txIds.includes(t)).sort()).toEqual([...txIds].sort());
    await store.rewatch(txIds, new Date(Date.now() + 60_000));
    expect((await store.dueWatched(new Date(), 64 * 300)).txIds.filter((t) => txIds.includes(t))).toEqual([]);
    await store.unwatch(txIds);
    expect(await store.watchedCount()).toBe(before);
  });
});
