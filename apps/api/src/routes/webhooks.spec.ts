import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import { createLogger } from '@proofline/shared-logger';
import { eventually, testBullRedis, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { createWebhooks, deliverWebhook, startWebhookDelivery, startWebhookWatcher } from '@proofline/webhooks-feature';
import type { RunningWebhookDelivery, RunningWebhookWatcher, Webhooks } from '@proofline/webhooks-feature';
import { call, seedKey, startApi } from '../testing/harness';
import type { RunningApi } from '../testing/harness';
import { dumpPrefix } from '../testing/raw-key-scan';
import { startRecordsFixture } from '../testing/records-fixture';
import type { KeyRole, RecordsFixture } from '../testing/records-fixture';

const W = '/api/v1/webhooks';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  answered: number;
}

/** A webhook receiver on loopback that answers `plan` in turn (then 200). */
async function startReceiver(plan: number[]): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const answered = plan.shift() ?? 200;
      received.push({ headers: req.headers, body, answered });
      res.statusCode = answered;
      res.end(answered === 200 ? 'ok' : 'boom');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/proofline`,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** What a receiver does, with node:crypto only (Standard Webhooks). */
function verifySignature(secret: string, r: Received): boolean {
  const id = String(r.headers['webhook-id']);
  const timestamp = String(r.headers['webhook-timestamp']);
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = Buffer.from(
    `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${r.body}`).digest('base64')}`,
  );
  return String(r.headers['webhook-signature'])
    .split(' ')
    .some((sig) => sig.length === expected.length && timingSafeEqual(Buffer.from(sig), expected));
}

describe('webhooks: management, SSRF, signed record.confirmed deliveries with retries', () => {
  let f: RecordsFixture;
  const logger = createLogger({ level: 'silent', name: 'test' });
  const workerRedis = testRedisClient({ maxRetriesPerRequest: null });
  const workerBull = testBullRedis();
  let webhooks: Webhooks;
  let watcher: RunningWebhookWatcher;
  let delivery: RunningWebhookDelivery;

  beforeAll(async () => {
    f = await startRecordsFixture({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    const { clock } = f.api.deps;
    webhooks = createWebhooks({ config: f.config, redis: workerRedis, prefix: f.prefix, clock });
    // The fixture's worker side (createPublication with the webhooks watch step, as apps/worker
    // composes it): the publisher and the confirmations.
    f.startPublisher();
    watcher = await startWebhookWatcher({
      connection: workerBull,
      redis: workerRedis,
      prefix: f.prefix,
      webhooks: webhooks.store,
      records: f.store,
      reader: f.dev.chain.reader,
      clock,
      everyMs: 200,
      retry: { attempts: 6, baseDelayMs: 100 },
      logger,
    });
    delivery = startWebhookDelivery({
      connection: workerBull,
      prefix: f.prefix,
      store: webhooks.store,
      box: webhooks.box,
      clock,
      allowPrivate: true,
      concurrency: 4,
      logger,
    });
  });
  afterAll(async () => {
    await delivery.close();
    await watcher.close();
    await f.close();
    await workerBull.quit();
    await workerRedis.quit();
  });

  const api = (method: string, path: string, key: KeyRole | null = 'writerA', body?: unknown) =>
    call(f.api, method, path, { ...(key ? { key: f.keys[key] } : {}), ...(body !== undefined ? { body } : {}) });

  it('a receiver that fails twice gets one correctly signed record.confirmed per record, retried under the same webhook-id', async () => {
    const receiver = await startReceiver([500, 500]);
    try {
      const created = await api('POST', W, 'writerA', { url: receiver.url, events: ['record.confirmed'] });
      expect(created.status).toBe(201);
      const hook = created.body as { id: string; url: string; events: string[]; secret: string; createdAt: string };
      expect(hook).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        url: receiver.url,
        events: ['record.confirmed'],
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
        createdAt: expect.any(String),
      });
      expect(Buffer.from(hook.secret.slice(6), 'base64')).toHaveLength(32);
      // Shown once: never listed, never stored raw.
      const listed = await api('GET', W);
      expect(listed.body).toEqual([
        { id: hook.id, url: receiver.url, events: ['record.confirmed'], createdAt: hook.createdAt },
      ]);
      const stored = await f.redis.hgetall(webhooks.store.keys.hook(hook.id));
      expect(JSON.stringify(stored)).not.toContain(hook.secret.slice(6));
      expect(stored['secret']).toMatch(/^v1\./);

      // tenant-a's record is watched; tenant-b (no webhooks) writes too and is not.
      const res = await f.request('POST', '/api/v1/records?encode=SHA256', { body: Buffer.from('watched record') });
      const { txId } = (await res.json()) as { txId: string };
      const other = await f.request('POST', '/api/v1/records?encode=SHA256', {
        key: 'writerB',
        body: Buffer.from('tenant b record'),
      });
      const otherTxId = ((await other.json()) as { txId: string }).txId;
      await eventually(
        async () => (await f.store.state(txId)) === 'published' && (await f.store.state(otherTxId)) === 'published',
        15_000,
      );
      expect(await f.redis.zrange(webhooks.store.keys.watchOf(txId), 0, -1)).toEqual([txId]);
      expect(await webhooks.store.watchedCount()).toBe(1);
      expect(receiver.received).toHaveLength(0); // not confirmed yet: nothing sent

      await f.produceBlock();
      await eventually(async () => receiver.received.find((r) => r.answered === 200), 20_000);
      // Settle: more passes of the watcher send nothing more.
      await watcher.tick();
      await watcher.tick();
      expect(await webhooks.store.watchedCount()).toBe(0);

      expect(receiver.received.map((r) => r.answered)).toEqual([500, 500, 200]);
      const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
      expect(ids.size).toBe(1);
      for (const r of receiver.received) {
        expect(verifySignature(hook.secret, r)).toBe(true);
        expect(r.headers['content-type']).toBe('application/json');
        expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      }
      expect(
        verifySignature(hook.secret, {
          ...(receiver.received[2] as Received),
          body: (receiver.received[2] as Received).body.replace('records', 'recordz'),
        }),
      ).toBe(false);
      const event = JSON.parse((receiver.received[2] as Received).body) as {
        type: string;
        timestamp: string;
        data: { txId: string; family: string; confirmation: { blockHash: string } };
      };
      const status = (await api('GET', `/api/v1/records/${txId}/status`)).body as { confirmation: unknown };
      expect(event).toEqual({
        type: 'record.confirmed',
        timestamp: expect.any(String),
        data: { txId, family: 'records', confirmation: status.confirmation },
      });

      const deliveries = await api('GET', `${W}/${hook.id}/deliveries`);
      expect(deliveries.status).toBe(200);
      const attempts = deliveries.body as {
        statusCode: number;
        attempt: number;
        durationMs: number;
        error: string | null;
        delivered: boolean;
        txId: string;
        event: string;
        messageId: string;
      }[];
      expect(attempts.map((a) => [a.attempt, a.statusCode, a.delivered])).toEqual([
        [3, 200, true],
        [2, 500, false],
        [1, 500, false],
      ]);
      expect(attempts[1]).toMatchObject({
        txId,
        event: 'record.confirmed',
        error: 'receiver answered 500',
        messageId: ids.values().next().value,
      });
      expect(typeof attempts[0]?.durationMs).toBe('number');

      // The secret is nowhere in Redis: not in the webhook, the job payloads or the delivery log.
      const dump = await dumpPrefix(f.redis, f.prefix);
      expect(dump.some((d) => d.key.startsWith(`${bullPrefix(f.prefix, QUEUES.webhooksDeliver)}:`))).toBe(true);
      expect(dump.filter((d) => d.text.includes(hook.secret.slice('whsec_'.length))).map((d) => d.key)).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it('record.failed for a record the chain rejected for good, and deletion stops deliveries', async () => {
    const receiver = await startReceiver([]);
    try {
      const hook = (await api('POST', W, 'writerA', { url: receiver.url, events: ['record.failed'] })).body as {
        id: string;
        secret: string;
      };
      // A record whose publication failed for good (as the publisher records a DOUBLE_SPEND), watched.
      const res = await f.request('POST', '/api/v1/records?encode=SHA256', { body: Buffer.from('rejected record') });
      const { txId } = (await res.json()) as { txId: string };
      await f.store.settle(txId, new Date(), 'DOUBLE_SPEND: rejected in this test');
      // Watched the way a publisher that passes no tenant does: the record's tenant first, then the watch.
      const tenant = await webhooks.store.recordTenant((await f.store.keysFor(txId))!.record(txId));
      expect(tenant).not.toBeNull();
      expect(await webhooks.store.watchRecord(tenant!, txId, new Date())).toBe(true);
      const got = await eventually(
        async () => receiver.received.find((r) => JSON.parse(r.body).data.txId === txId),
        15_000,
      );
      expect(verifySignature(hook.secret, got)).toBe(true);
      expect(JSON.parse(got.body)).toMatchObject({
        type: 'record.failed',
        data: { txId, family: 'records', confirmation: null },
      });

      const deleted = await api('DELETE', `${W}/${hook.id}`);
      expect(deleted.status).toBe(204);
      expect((await api('GET', `${W}/${hook.id}/deliveries`)).status).toBe(404);
      expect(await f.redis.exists(webhooks.store.keys.hook(hook.id), webhooks.store.keys.deliveries(hook.id))).toBe(0);
    } finally {
      await receiver.close();
    }
  }, 30_000);

  it('tenant isolation and permissions: Issuer_Admin of the tenant only', async () => {
    const hook = (
      await api('POST', W, 'writerA', { url: 'http://127.0.0.1:9/x', events: ['record.confirmed', 'record.failed'] })
    ).body as { id: string };
    expect((await api('GET', W, 'writerB')).body).toEqual([]);
    expect((await api('GET', `${W}/${hook.id}/deliveries`, 'writerB')).body).toMatchObject({
      status: 404,
      errorCode: 'WEBHOOK_NOT_FOUND',
    });
    expect((await api('DELETE', `${W}/${hook.id}`, 'writerB')).status).toBe(404);
    expect((await api('GET', `${W}/${hook.id}/deliveries`)).status).toBe(200);
    for (const key of ['writerA2', 'auditorA'] as const) {
      expect((await api('GET', W, key)).body).toMatchObject({ status: 403, errorCode: 'PERMISSION_DENIED' });
      expect((await api('POST', W, key, { url: 'http://127.0.0.1:9/x', events: ['record.confirmed'] })).status).toBe(
        403,
      );
    }
    expect((await api('GET', W, null)).status).toBe(401);
    expect((await api('DELETE', `${W}/${hook.id}`)).status).toBe(204);
  });

  it('malformed requests: 4xx problem+json with an errorCode', async () => {
    const cases: [unknown, number, string][] = [
      [{ url: 'http://127.0.0.1:9/x' }, 400, 'VALIDATION_FAILED'],
      [{ url: 'http://127.0.0.1:9/x', events: [] }, 400, 'VALIDATION_FAILED'],
      [{ url: 'http://127.0.0.1:9/x', events: ['record.created'] }, 400, 'VALIDATION_FAILED'],
      [{ url: 'http://127.0.0.1:9/x', events: ['record.failed', 'record.failed'] }, 400, 'VALIDATION_FAILED'],
      [{ url: 'http://127.0.0.1:9/x', events: ['record.failed'], extra: 1 }, 400, 'VALIDATION_FAILED'],
      [{ url: 'not a url', events: ['record.failed'] }, 400, 'WEBHOOK_URL_INVALID'],
      [{ url: 'https://user:pw@example.com/x', events: ['record.failed'] }, 400, 'WEBHOOK_URL_INVALID'],
      [{ url: 'ftp://example.com/x', events: ['record.failed'] }, 400, 'WEBHOOK_URL_NOT_ALLOWED'],
      [{ url: 'file:///etc/passwd', events: ['record.failed'] }, 400, 'WEBHOOK_URL_NOT_ALLOWED'],
      ['[1,2', 400, 'BODY_INVALID_JSON'],
      [[], 400, 'VALIDATION_FAILED'],
    ];
    for (const [body, status, errorCode] of cases) {
      const res = await api('POST', W, 'writerA', body);
      expect({
        body,
        status: res.status,
        type: res.headers.get('content-type'),
        errorCode: (res.body as { errorCode?: string }).errorCode,
      }).toEqual({
        body,
        status,
        type: expect.stringMatching(/^application\/problem\+json/),
        errorCode,
      });
    }
    expect((await api('DELETE', `${W}/not-a-uuid`)).body).toMatchObject({
      status: 400,
      errorCode: 'WEBHOOK_ID_INVALID',
    });
    expect((await api('GET', `${W}/00000000-0000-4000-8000-000000000000/deliveries`)).body).toMatchObject({
      status: 404,
      errorCode: 'WEBHOOK_NOT_FOUND',
    });
    const wrongType = await call(f.api, 'POST', W, { key: f.keys.writerA, body: '{}', contentType: 'text/plain' });
    expect(wrongType.status).toBe(415);
  });
});

describe('webhooks: SSRF refusals without WEBHOOK_ALLOW_PRIVATE', () => {
  let api: RunningApi;
  let key: string;
  beforeAll(async () => {
    api = await startApi({ prefix: uniquePrefix('whssrf') });
    key = (await seedKey(api, { tenant: 'acme', permissions: ['Issuer_Admin'] })).rawKey;
  });
  afterAll(async () => {
    await api.close();
  });

  it.each([
    'http://127.0.0.1:8080/x',
    'http://localhost/x',
    'http://10.0.0.7/x',
    'http://172.16.5.4/x',
    'http://192.168.1.1/x',
    'http://169.254.169.254/latest/meta-data/',
    'http://0.0.0.0/x',
    'http://[::1]/x',
    'http://[fd00::1]/x',
    'http://[fe80::1]/x',
    'http://[::ffff:127.0.0.1]/x',
    'http://2130706433/x',
    'http://0x7f.1/x',
  ])('refuses %s with 400 WEBHOOK_URL_NOT_ALLOWED', async (url) => {
    const res = await call(api, 'POST', W, { key, body: { url, events: ['record.confirmed'] } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ errorCode: 'WEBHOOK_URL_NOT_ALLOWED' });
    expect((await call(api, 'GET', W, { key })).body).toEqual([]);
  });

  it('refuses at delivery time too: a host that now resolves to a private address (DNS rebinding) is never connected to', async () => {
    const receiver = await startReceiver([]);
    const redis = testRedisClient();
    try {
      const prefix = api.deps.config.redisPrefix;
      // Stored while private delivery was allowed (as a public name would be before rebinding)...
      const allowed = createWebhooks({
        config: { webhooks: { allowPrivate: true, secretKey: undefined, limit: 10 } },
        redis,
        prefix,
        clock: api.deps.clock,
      });
      const url = receiver.url.replace('127.0.0.1', 'localhost');
      const hook = await allowed.admin.create('acme', { url, events: ['record.confirmed'] });
      // ...delivered by a worker that does not allow it.
      const job = {
        attemptsMade: 0,
        data: {
          webhookId: hook.id,
          messageId: 'msg_test',
          event: 'record.confirmed',
          txId: 'ab'.repeat(32),
          body: '{}',
        },
      };
      await expect(
        deliverWebhook({ store: allowed.store, box: allowed.box, clock: api.deps.clock, allowPrivate: false }, job),
      ).rejects.toMatchObject({ name: 'UnrecoverableError' });
      expect(receiver.received).toHaveLength(0);
      const [attempt] = await allowed.store.deliveries(hook.id);
      expect(attempt).toMatchObject({
        statusCode: null,
        delivered: false,
        error: 'the host resolves to a forbidden address',
      });
    } finally {
      await redis.quit();
      await receiver.close();
    }
  });
});
