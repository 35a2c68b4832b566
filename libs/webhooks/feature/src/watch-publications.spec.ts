import type { BroadcastVerdict, ChainPublisher } from '@proofline/chain-domain';
import { recordsKeys } from '@proofline/records-data-access';
import { systemClock } from '@proofline/shared-config';
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
      submitted.push({ txId: tx.txId, watched: (await redis.zscore(store.keys.watch, tx.txId)) !== null });
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
    // The watch script only (zscore: the test chain's own read).
    expect(commands.filter((c) => c !== 'zscore')).toEqual(['evalsha']);
    expect(submitted.at(-1)).toEqual({ txId, watched: true });
  });

  it("without a tenant, reads the record's tenant first (one HGET), then watches", async () => {
    const txId = txIdOf(2);
    await redis.hset(records.record(txId), 'tenant', 'with-hooks');
    const send = jest.spyOn(redis, 'sendCommand');
    await publisher.submit({ txId, rawTx });
    const commands = send.mock.calls.map(([command]) => command.name.replace(/^eval$/, 'evalsha')); // EVAL on a connection's first use
    send.mockRestore();
    expect(commands.filter((c) => c !== 'zscore')).toEqual(['hget', 'evalsha']);
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
    expect((await redis.zrange(store.keys.watch, 0, -1)).sort()).toEqual([txIdOf(1), txIdOf(2)].sort());
  });
});
