import { eventually } from '@proofline/shared-testing';
import { startRecordsFixture } from '../testing/records-fixture';
import type { RecordsFixture } from '../testing/records-fixture';

const LR = '/api/v1/linkedrecords';
const CAP = 3;

/**
 * MAX_UNCONFIRMED_LINKS against the devnet: a chain holds at most that many versions without a
 * stored proof. The update or delete past it answers 409 CHAIN_UNCONFIRMED_DEPTH with
 * Retry-After, stores nothing and spends nothing; once a block confirms the chain's versions it
 * grows again. The accept script decides atomically, so concurrent writers never exceed the cap.
 */
describe(`linked chains hold at most MAX_UNCONFIRMED_LINKS (${CAP}) unconfirmed versions`, () => {
  let f: RecordsFixture;
  beforeAll(async () => {
    f = await startRecordsFixture({ MAX_UNCONFIRMED_LINKS: String(CAP) });
  });
  afterAll(async () => {
    await f.close();
  });

  async function post(path: string, body?: string): Promise<{ status: number; res: Response; json: unknown }> {
    const res = await f.request('POST', path, body === undefined ? {} : { body });
    return { status: res.status, res, json: await res.json() };
  }
  async function create(): Promise<string> {
    const created = await post(LR, 'v0');
    expect(created.status).toBe(200);
    return (created.json as { txId: string }).txId;
  }
  /** Every record key and the pool's counters: what a refusal must leave as it was. */
  async function state() {
    const keys = await f.recordKeys();
    const values = await Promise.all(keys.map(async (k) => [k, await dump(k)] as const));
    const s = await f.api.recordsScope.wallet.pool.status();
    return {
      records: Object.fromEntries(values),
      pool: { free: s.free.count, leased: s.leased.count, spent: s.spentUnconfirmed.count },
    };
  }
  async function dump(k: string): Promise<unknown> {
    const type = await f.redis.type(k);
    if (type === 'hash') return f.redis.hgetall(k);
    if (type === 'list') return f.redis.lrange(k, 0, -1);
    if (type === 'zset') return f.redis.zrange(k, 0, -1);
    return f.redis.strlen(k);
  }

  it('the update and the delete past the cap: 409 + Retry-After, nothing stored or spent; a block lets the chain grow again', async () => {
    const root = await create();
    let end = root;
    for (let v = 1; v < CAP; v++) {
      const u = await post(`${LR}/${end}/update`, `v${v}`);
      expect(u.status).toBe(200);
      end = (u.json as { txId: string }).txId;
    }
    await f.queue.idle();
    const before = await state();
    for (const path of [`${LR}/${end}/update`, `${LR}/${end}/delete`]) {
      const refused = await post(path, path.endsWith('update') ? 'one too many' : undefined);
      expect(refused.status).toBe(409);
      expect(refused.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(refused.res.headers.get('retry-after')).toBe('60');
      expect(refused.json).toMatchObject({ errorCode: 'CHAIN_UNCONFIRMED_DEPTH', status: 409 });
    }
    expect(await state()).toEqual(before);

    // Publish and mine the three: the chain is confirmed up to its end, three more fit.
    f.startPublisher();
    const chain = await f.store.chain(root);
    expect(chain).toHaveLength(CAP);
    await eventually(async () =>
      (await Promise.all(chain.map((t) => f.store.state(t)))).every((s) => s === 'published'),
    );
    const block = await f.produceBlock();
    expect(block.txIds).toEqual(expect.arrayContaining(chain));
    for (let v = 0; v < CAP; v++) {
      const u = await post(`${LR}/${end}/update`, `w${v}`);
      expect(u.status).toBe(200);
      end = (u.json as { txId: string }).txId;
    }
    // The position of the newest confirmed version is kept on the chain's create record.
    expect(await f.redis.hget((await f.store.keysFor(root))!.record(root), 'minedPos')).toBe(String(CAP - 1));
    const again = await post(`${LR}/${end}/update`, 'past the cap again');
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ errorCode: 'CHAIN_UNCONFIRMED_DEPTH' });
  });

  it('concurrent writers extending one chain stop at exactly the cap', async () => {
    const root = await create();
    const outcomes: string[] = [];
    // Six writers, each updating whatever the chain's end is now (the owning tenant needs no
    // token) until the cap refuses it; losing a race to another writer is NOT_LINKED_RECORDS_END.
    await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        for (let i = 0; i < 20; i++) {
          const chain = await f.store.chain(root);
          const u = await post(`${LR}/${chain.at(-1) ?? root}/update`, `writer ${w} try ${i}`);
          const code = u.status === 200 ? 'OK' : (u.json as { errorCode: string }).errorCode;
          outcomes.push(code);
          if (code === 'CHAIN_UNCONFIRMED_DEPTH') return;
          expect(['OK', 'NOT_LINKED_RECORDS_END']).toContain(code);
        }
        throw new Error(`writer ${w} never reached the cap`);
      }),
    );
    expect(await f.store.chain(root)).toHaveLength(CAP);
    expect(outcomes.filter((o) => o === 'OK')).toHaveLength(CAP - 1);
    expect(outcomes.filter((o) => o === 'CHAIN_UNCONFIRMED_DEPTH')).toHaveLength(6);
  });
});
