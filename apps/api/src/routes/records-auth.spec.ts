import { deleteByPrefix } from '@proofline/shared-redis';
import { testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { assertAuthMatrix } from '../testing/auth-matrix';
import { call, seedKey, startApi } from '../testing/harness';
import type { RunningApi } from '../testing/harness';

const WRITE = [['Issuer_Admin'], ['Issuer_User']] as const;

describe('record endpoints behind identity API keys', () => {
  const prefix = uniquePrefix('recauth');
  let api: RunningApi;
  let linked: string;
  let independent: string;

  beforeAll(async () => {
    api = await startApi({ prefix });
    const writer = await seedKey(api, { tenant: 'acme', permissions: ['Issuer_User'] });
    const octet = { key: writer.rawKey, body: 'x', contentType: 'application/octet-stream' };
    linked = ((await call(api, 'POST', '/api/v1/linkedrecords', octet)).body as { txId: string }).txId;
    independent = ((await call(api, 'POST', '/api/v1/records', octet)).body as { txId: string }).txId;
  });
  afterAll(async () => {
    await api.close();
    const r = testRedisClient();
    await deleteByPrefix(r, prefix);
    await r.quit();
  });

  it('writes need Issuer_Admin or Issuer_User; reads and match any valid key', async () => {
    const body = { body: 'x', contentType: 'application/octet-stream' };
    const routes = [
      { method: 'POST', path: '/api/v1/linkedrecords', ...body, allowed: WRITE },
      { method: 'POST', path: `/api/v1/linkedrecords/${linked}/update`, ...body, allowed: WRITE },
      { method: 'POST', path: `/api/v1/linkedrecords/${linked}/delete`, allowed: WRITE },
      { method: 'GET', path: `/api/v1/linkedrecords/${linked}/status`, allowed: 'any-key' as const },
      { method: 'GET', path: `/api/v1/linkedrecords/${linked}/content`, allowed: 'any-key' as const },
      { method: 'POST', path: `/api/v1/linkedrecords/${linked}/match`, ...body, allowed: 'any-key' as const },
      { method: 'GET', path: `/api/v1/linkedrecords/${linked}/navigate?links=1`, allowed: 'any-key' as const },
      { method: 'POST', path: '/api/v1/records', ...body, allowed: WRITE },
      { method: 'GET', path: `/api/v1/records/${independent}/status`, allowed: 'any-key' as const },
      { method: 'GET', path: `/api/v1/records/${independent}/content`, allowed: 'any-key' as const },
      { method: 'POST', path: `/api/v1/records/${independent}/match`, ...body, allowed: 'any-key' as const },
    ];
    for (const r of routes) await assertAuthMatrix(api, { ...r, tenant: 'acme' });
  });

  it('the caller tenant decides who may update without a token', async () => {
    const owner = await seedKey(api, { tenant: 'acme', permissions: ['Issuer_Admin'] });
    const stranger = await seedKey(api, { tenant: 'other', permissions: ['Issuer_Admin'] });
    const auditor = await seedKey(api, { tenant: 'other', permissions: ['Verifier_Auditor'] });
    const octet = (key: string) => ({ key, body: 'y', contentType: 'application/octet-stream' });
    const refused = await call(api, 'POST', `/api/v1/linkedrecords/${linked}/update`, octet(stranger.rawKey));
    expect(refused.status).toBe(403);
    const ok = await call(api, 'POST', `/api/v1/linkedrecords/${linked}/update`, octet(owner.rawKey));
    expect(ok.status).toBe(200);
    const read = await call(api, 'GET', `/api/v1/linkedrecords/${linked}/status`, { key: auditor.rawKey });
    expect(read.body).toMatchObject({ updatable: false });
  });
});
