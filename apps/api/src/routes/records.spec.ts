import { createHash } from 'node:crypto';
import { eventually } from '@proofline/shared-testing';
import { KEYS, startRecordsFixture } from '../testing/records-fixture';
import type { RecordsFixture } from '../testing/records-fixture';

const R = '/api/v1/records';

describe('independent records over HTTP', () => {
  let f: RecordsFixture;
  beforeAll(async () => {
    f = await startRecordsFixture();
  });
  afterAll(async () => {
    await f.close();
  });

  it('write, status, content (GET and HEAD), match, then confirmation', async () => {
    const record = Buffer.from('an invoice');
    const res = await f.request('POST', `${R}?encode=Base64(inv:2024-01)`, { body: record });
    expect(res.status).toBe(200);
    const written = (await res.json()) as { txId: string; encoding: { contentType: string; output: string }[] };
    const expected = Buffer.concat([Buffer.from('inv:2024-01'), record]).toString('base64');
    expect(written).toEqual({
      txId: expect.stringMatching(/^[0-9a-f]{64}$/),
      encoding: [{ contentType: 'text/plain; event-encoded=Base64', output: expected }],
    });

    // stored atomically with its raw tx and an outbox entry
    const meta = await f.store.meta(written.txId);
    expect(meta).toMatchObject({
      family: 'independent',
      kind: 'independent',
      tenant: 'tenant-a',
      state: 'pending',
      byteLength: expected.length,
    });
    expect(await f.redis.zscore((await f.store.keysFor(written.txId))!.outbox, written.txId)).not.toBeNull();
    expect((await f.store.publication(written.txId))?.rawTx.byteLength).toBeGreaterThan(0);

    const status = await f.request('GET', `${R}/${written.txId}/status`, { key: KEYS.auditorA });
    expect(await status.json()).toEqual({ confirmation: null, publication: 'pending' });

    const content = await f.request('GET', `${R}/${written.txId}/content`, { key: KEYS.auditorA });
    expect(await content.text()).toBe(expected);
    expect(content.headers.get('content-type')).toBe('text/plain; event-encoded=Base64');
    expect(content.headers.get('etag')).toBe(`"${written.txId}"`);
    const head = await f.request('HEAD', `${R}/${written.txId}/content`, { key: KEYS.auditorA });
    expect(head.headers.get('content-length')).toBe(String(expected.length));
    expect(head.headers.get('content-type')).toBe('text/plain; event-encoded=Base64');
    // a txId names its bytes for ever: a client holding them revalidates with If-None-Match
    const revalidate = (tag: string) =>
      fetch(`${f.base}${R}/${written.txId}/content`, {
        headers: { 'x-api-key': f.keys[KEYS.auditorA], 'if-none-match': tag },
      });
    const unchanged = await revalidate(`W/"x", "${written.txId}"`);
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get('etag')).toBe(`"${written.txId}"`);
    expect(await unchanged.text()).toBe('');
    expect((await revalidate('"another"')).status).toBe(200);

    const match = async (q: string, body: Buffer | string) =>
      (
        (await (await f.request('POST', `${R}/${written.txId}/match${q}`, { body, key: KEYS.auditorA })).json()) as {
          match: boolean;
        }
      ).match;
    expect(await match('?encode=Base64(inv:2024-01)', record)).toBe(true);
    expect(await match('?encode=Base64(inv:2024-02)', record)).toBe(false);
    expect(await match('', record)).toBe(false); // salt omitted
    expect(await match('?encode=Base64(inv:2024-01)', 'another')).toBe(false);

    // an unsalted SHA256 record matches with encode omitted
    const hashed = (await (await f.request('POST', `${R}?encode=SHA256`, { body: 'doc' })).json()) as {
      txId: string;
      encoding: { output: string }[];
    };
    expect(hashed.encoding[0]?.output).toBe(createHash('sha256').update('doc').digest('hex'));
    const m = await f.request('POST', `${R}/${hashed.txId}/match`, { body: 'doc', key: KEYS.auditorA });
    expect(await m.json()).toEqual({ match: true, confirmation: null });

    f.startPublisher();
    await eventually(async () => (await f.store.state(written.txId)) === 'published', 10_000);
    const block = await f.produceBlock();
    expect(block.txIds.filter((t) => t === written.txId)).toHaveLength(1);
    const confirmed = (await (
      await f.request('GET', `${R}/${written.txId}/status`, { key: KEYS.auditorA })
    ).json()) as {
      confirmation: { confirmedBlocks: number; blockHash: string };
    };
    expect(confirmed.confirmation).toMatchObject({ confirmedBlocks: 1, blockHash: block.hash });
    // the node reports it MINED in the same block as the record's status
    expect(await f.arcStatus(written.txId)).toMatchObject({ txStatus: 'MINED', blockHash: block.hash });
  });
});
