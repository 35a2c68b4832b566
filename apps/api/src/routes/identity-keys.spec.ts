import { registerBootstrapKey } from '@proofline/identity-feature';
import { generateRawKey } from '@proofline/identity-domain';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { call, startApi, startKeyWorker } from '../testing/harness';
import type { RunningApi } from '../testing/harness';
import type { RunningKeyWorker } from '@proofline/identity-feature';

describe('identity api keys (smoke)', () => {
  const prefix = uniquePrefix('idk');
  const { redis, cleanup } = testRedis(prefix);
  let api: RunningApi;
  let worker: RunningKeyWorker;
  const admin = generateRawKey();

  beforeAll(async () => {
    api = await startApi({ prefix, env: { KEY_LIMIT: '3' } });
    worker = await startKeyWorker({ prefix, env: { KEY_LIMIT: '3' } });
    await registerBootstrapKey({ redis, config: api.deps.config }, admin);
  });
  afterAll(async () => {
    await worker.close();
    await api.close();
    await cleanup();
  });

  it('creates, lists, revokes and deletes', async () => {
    const created = await call(api, 'POST', '/api/v1/auth/identity-api-keys', { key: admin, body: { name: 'first', issuerPermission: 'Issuer_User' } });
    expect(created.status).toBe(201);
    const key = created.body as { id: string; rawKey: string };
    const list = await call(api, 'GET', '/api/v1/auth/identity-api-keys', { key: admin });
    expect(list.status).toBe(200);
    expect((list.body as { id: string }[]).map((k) => k.id)).toContain(key.id);
    const rev = await call(api, 'POST', `/api/v1/auth/identity-api-keys/${key.id}/revoke`, { key: admin, body: { isRevoked: true } });
    expect(rev.status).toBe(201);
    const del = await call(api, 'DELETE', `/api/v1/auth/identity-api-keys/${key.id}`, { key: admin });
    expect(del.status).toBe(204);
    const usage = await call(api, 'GET', '/api/v1/auth/identity-api-keys/usage', { key: admin });
    expect(usage.body).toEqual({ used: 1, limit: 3 });
  });
});
