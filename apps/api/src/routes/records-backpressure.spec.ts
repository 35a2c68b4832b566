import { recordsKeys } from '@proofline/records-data-access';
import { eventually } from '@proofline/shared-testing';
import { startRecordsFixture } from '../testing/records-fixture';
import type { RecordsFixture } from '../testing/records-fixture';

/**
 * Back-pressure: when publication lags MAX_PENDING_PUBLICATIONS records behind, writes answer 503
 * with Retry-After and store nothing; once the publisher drains the outbox, writes are accepted
 * again. The check sits in the same Lua script as the write, so it holds under concurrency.
 */
describe('write back-pressure', () => {
  let f: RecordsFixture;
  beforeAll(async () => {
    // One partition: the bound is then exact (with P partitions each outbox takes
    // ceil(MAX_PENDING_PUBLICATIONS / P); record-writes.spec shows that).
    f = await startRecordsFixture({ MAX_PENDING_PUBLICATIONS: '3', REDIS_PARTITIONS: '1' });
  });
  afterAll(async () => {
    await f.close();
  });

  it('refuses writes beyond the backlog limit with 503 + Retry-After, then accepts again once drained', async () => {
    const outbox = recordsKeys(f.prefix).outbox;
    const created = (await (await f.request('POST', '/api/v1/linkedrecords', { body: 'root' })).json()) as {
      txId: string;
    };
    // 10 concurrent independent writes with 2 slots left: exactly 2 accepted
    const writes = await Promise.all(
      Array.from({ length: 10 }, (_, i) => f.request('POST', '/api/v1/records', { body: `r${i}` })),
    );
    expect(writes.filter((r) => r.status === 200)).toHaveLength(2);
    const refused = writes.filter((r) => r.status !== 200);
    expect(refused.every((r) => r.status === 503 && r.headers.get('retry-after') === '5')).toBe(true);
    expect(await refused[0]?.json()).toMatchObject({ errorCode: 'PUBLICATION_BACKLOG_FULL', status: 503 });
    expect(await f.redis.zcard(outbox)).toBe(3);

    // an update is refused too, and its link is NOT reserved (the chain stays updatable)
    const before = await f.recordKeys();
    const update = await f.request('POST', `/api/v1/linkedrecords/${created.txId}/update`, { body: 'v2' });
    expect(update.status).toBe(503);
    expect(await f.recordKeys()).toEqual(before);
    expect(await (await f.request('GET', `/api/v1/linkedrecords/${created.txId}/status`)).json()).toMatchObject({
      updatable: true,
    });

    f.startPublisher();
    await eventually(async () => (await f.redis.zcard(outbox)) === 0, 15_000);
    expect((await f.request('POST', `/api/v1/linkedrecords/${created.txId}/update`, { body: 'v2' })).status).toBe(200);
  });
});
