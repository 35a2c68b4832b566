import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { KeyWriter, identityKeys } from '@proofline/identity-data-access';
import { createBootstrapKey } from '@proofline/identity-feature';
import type { RunningKeyWorker } from '@proofline/identity-feature';
import { createKeyJob, keyRecord } from '@proofline/identity-domain';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import { eventually, keysMatching, testBullRedis, testRedis, uniquePrefix } from '@proofline/shared-testing';
import { call, seedKey, startApi, startKeyWorker } from '../testing/harness';
import type { RunningApi } from '../testing/harness';
import { assertNoRawKeysStored } from '../testing/raw-key-scan';

const BASE = '/api/v1/auth/identity-api-keys';

describe('key limit under concurrency (two API instances, two key workers)', () => {
  const prefix = uniquePrefix('idrace');
  const { redis, cleanup } = testRedis(prefix);
  const keys = identityKeys(prefix);
  const env = { KEY_LIMIT: '5' };
  let apis: RunningApi[] = [];
  let workers: RunningKeyWorker[] = [];

  beforeAll(async () => {
    apis = [await startApi({ prefix, env }), await startApi({ prefix, env })];
    workers = [await startKeyWorker({ prefix, env }), await startKeyWorker({ prefix, env })];
  });
  afterAll(async () => {
    for (const w of workers) await w.close();
    for (const a of apis) await a.close();
    await cleanup();
  });

  it('with one slot left, 20 concurrent creates give exactly one 201 and nineteen 403 identity_api_key_limit_exceeded', async () => {
    const tenant = 'race';
    const admin = await createBootstrapKey({ redis, config: apis[0]!.deps.config }, tenant);
    for (let i = 0; i < 3; i += 1) await seedKey(apis[0]!, { tenant, permissions: ['Issuer_User'] });
    expect(await redis.zcard(keys.tenantKeys(tenant))).toBe(4);

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(apis[i % 2]!, 'POST', BASE, { key: admin, body: { name: `racer ${i}`, issuerPermission: 'Issuer_User' } }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array<number>(19).fill(403)]);
    for (const r of results.filter((x) => x.status === 403))
      expect(r.body).toMatchObject({ errorCode: 'identity_api_key_limit_exceeded' });
    expect((await call(apis[1]!, 'GET', `${BASE}/usage`, { key: admin })).body).toEqual({ used: 5, limit: 5 });
    expect(await redis.zcard(keys.tenantKeys(tenant))).toBe(5);
    const winner = results.find((r) => r.status === 201)!.body as { id: string; rawKey: string };
    expect(await redis.zscore(keys.tenantKeys(tenant), winner.id)).not.toBeNull();
    await assertNoRawKeysStored(redis, prefix, [admin, winner.rawKey]);
  });
});

/** A case of its own: a private prefix (cleaned after the describe), its identity keys and a BullMQ connection. */
function privateStore(label: string) {
  const prefix = uniquePrefix(label);
  const { redis, cleanup } = testRedis(prefix);
  const connection = testBullRedis();
  afterAll(async () => {
    await connection.quit();
    await cleanup();
  });
  return { prefix, redis, keys: identityKeys(prefix), connection };
}

describe('key worker failures: a worker dies after writing', () => {
  const { prefix, redis, keys, connection } = privateStore('idcrash');

  it('a worker that dies after writing: the stalled job is retried and the API still answers 201, with no duplicate and no leaked slot', async () => {
    const api = await startApi({ prefix, env: { KEY_LIMIT: '5', KEY_CREATE_TIMEOUT_MS: '15000' } });
    const tenant = 'crash';
    const admin = await createBootstrapKey({ redis, config: api.deps.config }, tenant);
    const pending = call(api, 'POST', BASE, {
      key: admin,
      body: { name: 'survivor', verifierPermission: 'Verifier_User' },
    });

    // A "worker" takes the job, performs the atomic write, then dies without completing it.
    const doomed = new Worker(QUEUES.identityKeys, null, {
      connection,
      prefix: bullPrefix(prefix, QUEUES.identityKeys),
      lockDuration: 600,
    });
    const token = randomUUID();
    let job = await doomed.getNextJob(token, { block: true });
    for (let i = 0; !job && i < 50; i += 1) job = await doomed.getNextJob(token, { block: true });
    expect(job).toBeDefined();
    const d = createKeyJob.parse(job!.data);
    const writer = new KeyWriter(redis, prefix);
    const written = await writer.create(keyRecord({ ...d, secret: { keyHash: d.keyHash, last4: d.last4 } }), {
      limit: 5,
      deadlineMs: d.deadlineMs,
    });
    expect(written.outcome).toBe('created');
    await doomed.close(true);
    expect(JSON.stringify(job!.data)).not.toContain('idty_');

    // A healthy worker recovers the stalled job; the idempotent script sees the key already there.
    const healthy = await startKeyWorker({
      prefix,
      env: { KEY_LIMIT: '5' },
      worker: { stalledInterval: 200, lockDuration: 1000 },
    });
    const res = await pending;
    expect(res.status).toBe(201);
    const created = res.body as { id: string; rawKey: string };
    expect(created.id).toBe(d.id);
    expect(await redis.zcard(keys.tenantKeys(tenant))).toBe(2);
    expect((await call(api, 'GET', `${BASE}/usage`, { key: created.rawKey })).status).toBe(403); // authenticates; lacks admin
    await assertNoRawKeysStored(redis, prefix, [admin, created.rawKey]);
    await healthy.close();
    await api.close();
  });
});

describe('key worker failures: no worker answers in time', () => {
  const { prefix, redis, keys, connection } = privateStore('idlate');

  it('no worker answers in time: 503 KEY_SERVICE_UNAVAILABLE with Retry-After, nothing created, and a late worker creates nothing', async () => {
    const api = await startApi({ prefix, env: { KEY_LIMIT: '5', KEY_CREATE_TIMEOUT_MS: '300' } });
    const tenant = 'late';
    const admin = await createBootstrapKey({ redis, config: api.deps.config }, tenant);
    const res = await call(api, 'POST', BASE, {
      key: admin,
      body: { name: 'too slow', issuerPermission: 'Issuer_User' },
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(res.body).toMatchObject({ errorCode: 'KEY_SERVICE_UNAVAILABLE' });
    expect(await redis.zcard(keys.tenantKeys(tenant))).toBe(1);

    const late = await startKeyWorker({ prefix, env: { KEY_LIMIT: '5' } });
    // Wait until the late worker has nothing left to take (the abandoned job was removed, or it
    // has run and refused it as too late), then read the stored state.
    const queue = new Queue(QUEUES.identityKeys, { connection, prefix: bullPrefix(prefix, QUEUES.identityKeys) });
    const pending = async () =>
      Object.values(await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).reduce((a, b) => a + b, 0);
    await eventually(async () => (await pending()) === 0 && late.worker.isRunning());
    expect(await redis.zcard(keys.tenantKeys(tenant))).toBe(1);
    expect(await redis.hlen(keys.keyByHash)).toBe(1); // the bootstrap admin only
    expect(await keysMatching(redis, `${keys.keyEntityPrefix}:*`)).toHaveLength(1);
    await queue.close();
    await late.close();
    await api.close();
  });
});
