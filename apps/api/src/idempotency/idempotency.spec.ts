import { eventually, keysMatching } from '@proofline/shared-testing';
import { startRecordsFixture } from '../testing/records-fixture';
import type { RecordsFixture, KEYS } from '../testing/records-fixture';
import { IdempotencyStore } from './idempotency-store';
import { requestFingerprint } from './middleware';

const R = '/api/v1/records';
const L = '/api/v1/linkedrecords';

/**
 * Idempotent writes over the real app, real Redis and the real write path: `Idempotency-Key`
 * replays the first answer, refuses reuse with another request, and lets exactly one of many
 * concurrent requests do the work.
 */
describe('Idempotency-Key on record writes', () => {
  let f: RecordsFixture;
  let n = 0;
  const fresh = () => `idem-${Date.now()}-${++n}`;
  const post = (path: string, body: string | undefined, key: string | undefined, role: keyof typeof KEYS = 'writerA') =>
    fetch(`${f.base}${path}`, {
      method: 'POST',
      headers: {
        'x-api-key': f.keys[role],
        ...(body !== undefined ? { 'content-type': 'application/octet-stream' } : {}),
        ...(key !== undefined ? { 'idempotency-key': key } : {}),
      },
      ...(body !== undefined ? { body } : {}),
    });
  const outboxSize = () => f.store.outboxSize();
  const entry = (tenant: string, key: string) => f.api.deps.idempotency?.entryKey(tenant, key) ?? '';

  beforeAll(async () => {
    f = await startRecordsFixture();
  });
  afterAll(async () => {
    await f.close();
  });

  it('without the header nothing is stored for idempotency', async () => {
    const res = await post(R, 'plain', undefined);
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(await keysMatching(f.redis, `${f.prefix}:*:idempotency:*`)).toEqual([]);
  });

  it('20 concurrent requests with one key: one transaction, everyone gets its txId (or 409)', async () => {
    const key = fresh();
    const before = await outboxSize();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(`${R}?encode=SHA256`, 'same body', key)));
    const bodies = await Promise.all(
      answers.map(async (r) => ({
        status: r.status,
        body: (await r.json()) as { txId?: string; errorCode?: string },
        retryAfter: r.headers.get('retry-after'),
      })),
    );
    const ok = bodies.filter((b) => b.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    for (const b of bodies.filter((x) => x.status !== 200))
      expect(b).toMatchObject({ status: 409, body: { errorCode: 'IDEMPOTENCY_KEY_IN_PROGRESS' }, retryAfter: '1' });
    const txIds = new Set(ok.map((b) => b.body.txId));
    expect(txIds.size).toBe(1);
    // exactly one record stored and queued
    expect(await outboxSize()).toBe(before + 1);
    const txId = [...txIds][0] as string;
    expect(await f.store.meta(txId)).toMatchObject({ tenant: 'tenant-a', family: 'independent' });
    expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true').length).toBe(ok.length - 1);
  });

  it('replays the first answer after completion (status, body, content type), for 24 h', async () => {
    const key = fresh();
    const first = await post(`${L}?encode=SHA256`, 'chain v1', key);
    expect(first.status).toBe(200);
    const firstBody = await first.text();
    const again = await post(`${L}?encode=SHA256`, 'chain v1', key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(await again.text()).toBe(firstBody);
    const pttl = await f.redis.pttl(entry('tenant-a', key));
    expect(pttl).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(pttl).toBeLessThanOrEqual(24 * 3600_000);
    // the stored answer carries an updateToken: it is not at rest in the clear
    const { updateToken } = JSON.parse(firstBody) as { updateToken: string };
    const stored = (await f.redis.get(entry('tenant-a', key))) ?? '';
    expect(stored).not.toContain(updateToken);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(JSON.parse(firstBody).txId as string);
  });

  it('the same key with another body, query or route: 422 IDEMPOTENCY_KEY_REUSED, nothing written', async () => {
    const key = fresh();
    expect((await post(R, 'body one', key)).status).toBe(200);
    const before = await outboxSize();
    for (const [path, body] of [
      [R, 'body two'],
      [`${R}?encode=SHA256`, 'body one'],
      [L, 'body one'],
    ] as const) {
      const res = await post(path, body, key);
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toMatchObject({ status: 422, errorCode: 'IDEMPOTENCY_KEY_REUSED' });
    }
    expect(await outboxSize()).toBe(before);
  });

  it('keys are per tenant: another tenant with the same key does its own work', async () => {
    const key = fresh();
    const a = (await (await post(R, 'tenant body', key)).json()) as { txId: string };
    const b = (await (await post(R, 'tenant body', key, 'writerB')).json()) as { txId: string };
    expect(b.txId).not.toBe(a.txId);
    expect(await f.store.meta(b.txId)).toMatchObject({ tenant: 'tenant-b' });
  });

  it('update and delete: concurrent retries spend the chain end once; a 4xx answer is replayed too', async () => {
    const root = (await (await post(L, 'root', undefined)).json()) as { txId: string };
    const key = fresh();
    const updates = await Promise.all(Array.from({ length: 10 }, () => post(`${L}/${root.txId}/update`, 'v2', key)));
    const ok = await Promise.all(
      updates.filter((r) => r.status === 200).map(async (r) => ((await r.json()) as { txId: string }).txId),
    );
    expect(new Set(ok).size).toBe(1);
    expect(updates.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    // the chain has exactly two versions
    const nav = (await (await f.request('GET', `${L}/${root.txId}/navigate?links=5`)).json()) as { txIds: string[] };
    expect(nav.txIds).toEqual([ok[0]]);

    // a refused update (not the chain's end) is recorded and replayed, not re-run
    const staleKey = fresh();
    const stale = await post(`${L}/${root.txId}/update`, 'v2b', staleKey);
    expect(stale.status).toBe(409);
    const staleBody = await stale.text();
    const replayed = await post(`${L}/${root.txId}/update`, 'v2b', staleKey);
    expect(replayed.status).toBe(409);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await replayed.text()).toBe(staleBody);

    const delKey = fresh();
    const del = await Promise.all([
      post(`${L}/${ok[0]}/delete`, undefined, delKey),
      post(`${L}/${ok[0]}/delete`, undefined, delKey),
    ]);
    const delIds = await Promise.all(del.map(async (r) => ((await r.json()) as { txId?: string }).txId));
    expect(del.map((r) => r.status)).toEqual([200, 200]);
    expect(delIds[0]).toBe(delIds[1]);
  });

  it('a malformed key is 400 IDEMPOTENCY_KEY_INVALID and nothing is written', async () => {
    const before = await outboxSize();
    for (const bad of ['', 'a'.repeat(256), 'has space', 'tab\there']) {
      const res = await post(R, 'x', bad);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ errorCode: 'IDEMPOTENCY_KEY_INVALID' });
    }
    expect((await post(R, 'x', 'a'.repeat(255))).status).toBe(200);
    expect(await outboxSize()).toBe(before + 1);
  });

  it('after the answer expires the key is free again (a new request does new work)', async () => {
    const key = fresh();
    const first = (await (await post(R, 'expiring', key)).json()) as { txId: string };
    // the 24 h TTL runs out (shortened here; Redis expires the entry itself)
    await f.redis.pexpire(entry('tenant-a', key), 1);
    await eventually(async () => (await f.redis.exists(entry('tenant-a', key))) === 0, 5000);
    const second = await post(R, 'expiring', key);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(((await second.json()) as { txId: string }).txId).not.toBe(first.txId);
  });

  it('a claim left by a crashed request expires: the retry waits, then does the work', async () => {
    const key = fresh();
    const crashed = new IdempotencyStore(f.redis, f.prefix, { claimTtlMs: 400 });
    // the crashed request was the retry's own request (same fingerprint)
    const fp = requestFingerprint({ method: 'POST', originalUrl: R, body: Buffer.from('crash body') } as never);
    expect((await crashed.claim('tenant-a', key, fp)).kind).toBe('claimed');
    const started = Date.now();
    const retry = await post(R, 'crash body', key);
    expect(retry.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('a request still in progress past the wait bound: 409 IDEMPOTENCY_KEY_IN_PROGRESS with Retry-After', async () => {
    const key = fresh();
    const slow = new IdempotencyStore(f.redis, f.prefix, { claimTtlMs: 60_000 });
    const fp = requestFingerprint({ method: 'POST', originalUrl: R, body: Buffer.from('slow body') } as never);
    const claim = await slow.claim('tenant-a', key, fp);
    expect(claim.kind).toBe('claimed');
    const res = await post(R, 'slow body', key);
    expect(res.status).toBe(409);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toMatchObject({ errorCode: 'IDEMPOTENCY_KEY_IN_PROGRESS' });
    // the owner answers: the retry gets that answer
    if (claim.kind === 'claimed')
      await slow.complete('tenant-a', key, fp, {
        status: 200,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: Buffer.from('{"txId":"x"}'),
      });
    const retry = await post(R, 'slow body', key);
    expect(retry.status).toBe(200);
    expect(await retry.text()).toBe('{"txId":"x"}');
  }, 20_000);
});
