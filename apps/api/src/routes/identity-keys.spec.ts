import { identityKeys } from '@proofline/identity-data-access';
import { createBootstrapKey } from '@proofline/identity-feature';
import type { RunningKeyWorker } from '@proofline/identity-feature';
import { hashKey } from '@proofline/identity-domain';
import type { IdentityApiKey } from '@proofline/identity-domain';
import { ManualClock } from '@proofline/shared-config';
import { eventually, testRedis, uniquePrefix } from '@proofline/shared-testing';
import { assertAuthMatrix } from '../testing/auth-matrix';
import { call, seedKey, startApi, startKeyWorker } from '../testing/harness';
import type { CallResult, RunningApi } from '../testing/harness';
import { assertNoRawKeysStored } from '../testing/raw-key-scan';

const BASE = '/api/v1/auth/identity-api-keys';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DAY = 86_400_000;
type Created = IdentityApiKey & { rawKey: string };

describe('identity API key endpoints', () => {
  const prefix = uniquePrefix('idkeys');
  const { redis, cleanup } = testRedis(prefix);
  const keys = identityKeys(prefix);
  const clock = new ManualClock('2026-11-22T12:00:00.000Z');
  const env = { KEY_LIMIT: '5', KEY_LIFETIME_DAYS: '60' };
  const issued: string[] = [];
  let api: RunningApi;
  let apiB: RunningApi;
  let worker: RunningKeyWorker;

  /** A tenant of its own with an admin key (Issuer_Admin + Verifier_Admin) that counts 1. */
  async function freshTenant(label: string): Promise<{ tenant: string; admin: string; adminId: string }> {
    const tenant = `${label}-${Math.random().toString(36).slice(2, 8)}`;
    const admin = await createBootstrapKey({ redis, config: api.deps.config, clock }, tenant);
    issued.push(admin);
    return { tenant, admin, adminId: (await redis.hget(keys.keyByHash, hashKey(admin)))! };
  }
  const count = (tenant: string) => redis.zcard(keys.tenantKeys(tenant));
  async function create(key: string, body: unknown, target: RunningApi = api): Promise<CallResult> {
    const res = await call(target, 'POST', BASE, { key, body });
    if (res.status === 201) issued.push((res.body as Created).rawKey);
    return res;
  }

  beforeAll(async () => {
    api = await startApi({ prefix, clock, env });
    apiB = await startApi({ prefix, clock, env });
    worker = await startKeyWorker({ prefix, env });
  });
  afterAll(async () => {
    await worker.close();
    await apiB.close();
    await api.close();
    await cleanup();
  });

  describe('auth matrix (every route)', () => {
    const admins = [['Issuer_Admin'], ['Verifier_Admin']] as const;
    it.each([
      ['POST', BASE, { name: 'abc', issuerPermission: 'Issuer_User' }],
      ['GET', BASE, undefined],
      ['GET', `${BASE}/usage`, undefined],
      ['DELETE', `${BASE}/00000000-0000-4000-8000-000000000000`, undefined],
      ['POST', `${BASE}/00000000-0000-4000-8000-000000000000/revoke`, { isRevoked: true }],
    ])('%s %s', async (method, path, body) => {
      await assertAuthMatrix(api, { method, path, body, allowed: admins });
    });
  });

  describe('POST (create)', () => {
    it('issues a key: 201 with rawKey once, only the hash stored, expiry by the clock, counted', async () => {
      const t = await freshTenant('create');
      const res = await create(t.admin, { name: '  ci deploy key ', issuerPermission: 'Issuer_User', verifierPermission: 'Verifier_Auditor' });
      expect(res.status).toBe(201);
      const key = res.body as Created;
      expect(key).toEqual({
        id: expect.stringMatching(UUID),
        name: 'ci deploy key',
        keyMask: `idty_${'*'.repeat(28)}${key.rawKey.slice(-4)}`,
        permissions: ['Issuer_User', 'Verifier_Auditor'],
        expiresAt: new Date(clock.now().getTime() + 60 * DAY).toISOString(),
        revokedAt: null,
        createdBy: t.adminId,
        createdAt: clock.now().toISOString(),
        updatedAt: clock.now().toISOString(),
        rawKey: expect.stringMatching(/^idty_[A-Za-z0-9]{32}$/),
      });
      const stored = await redis.hgetall(keys.keyEntity(key.id));
      expect(stored).toMatchObject({ id: key.id, tenant: t.tenant, keyHash: hashKey(key.rawKey), last4: key.rawKey.slice(-4), permissions: 'Issuer_User|Verifier_Auditor', source: 'identity' });
      expect(JSON.stringify(stored)).not.toContain(key.rawKey);
      expect(await redis.hget(keys.keyByHash, hashKey(key.rawKey))).toBe(key.id);
      expect(await redis.zscore(keys.tenantKeys(t.tenant), key.id)).toBe(String(clock.now().getTime()));
      expect(await count(t.tenant)).toBe(2);

      // The new key authenticates (it lacks admin rights, so listing is 403, not 401).
      expect((await call(api, 'GET', BASE, { key: key.rawKey })).body).toMatchObject({ status: 403, errorCode: 'PERMISSION_DENIED' });
      // The raw key is never shown again.
      const list = await call(api, 'GET', BASE, { key: t.admin });
      expect(JSON.stringify(list.body)).not.toContain(key.rawKey);
    });

    it.each([
      ['neither side', { name: 'abc' }, 'VALIDATION_FAILED', 'at least one of issuerPermission and verifierPermission is required'],
      ['short name', { name: 'ab', issuerPermission: 'Issuer_User' }, 'VALIDATION_FAILED', 'name: must be 3 to 32 characters'],
      ['blank padded name', { name: '  a  ', issuerPermission: 'Issuer_User' }, 'VALIDATION_FAILED', 'name: must be 3 to 32 characters'],
      ['long name', { name: 'x'.repeat(33), issuerPermission: 'Issuer_User' }, 'VALIDATION_FAILED', 'name: must be 3 to 32 characters'],
      ['non-string name', { name: 42, issuerPermission: 'Issuer_User' }, 'VALIDATION_FAILED', 'name: must be a string'],
      ['wrong case', { name: 'abc', issuerPermission: 'issuer_admin' }, 'VALIDATION_FAILED', 'issuerPermission: must be one of Issuer_Admin, Issuer_User, Issuer_Auditor'],
      ['wrong side', { name: 'abc', verifierPermission: 'Issuer_User' }, 'VALIDATION_FAILED', 'verifierPermission: must be one of Verifier_Admin, Verifier_User, Verifier_Auditor'],
      ['typo field', { name: 'abc', issuerPermissions: 'Issuer_User' }, 'VALIDATION_FAILED', 'unknown field "issuerPermissions"'],
      ['array body', [{ name: 'abc' }], 'VALIDATION_FAILED', 'the body must be a JSON object'],
      ['scalar body (strict JSON parser)', '"abc"', 'BODY_INVALID_JSON', 'not valid JSON'],
      ['no body', undefined, 'VALIDATION_FAILED', 'a JSON object body is required'],
      ['invalid JSON', '{"name": ', 'BODY_INVALID_JSON', 'not valid JSON'],
    ])('400 for %s, nothing written', async (_what, body, errorCode, detail) => {
      const t = await freshTenant('val');
      const res = await create(t.admin, body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body).toMatchObject({ status: 400, errorCode, detail: expect.stringContaining(detail) });
      expect(await count(t.tenant)).toBe(1);
    });

    it('415 for another content type, 413 over 16 kB; nothing written', async () => {
      const t = await freshTenant('media');
      const text = await call(api, 'POST', BASE, { key: t.admin, body: 'name=abc', contentType: 'text/plain' });
      expect(text.status).toBe(415);
      expect(text.body).toMatchObject({ errorCode: 'UNSUPPORTED_MEDIA_TYPE' });
      const big = await call(api, 'POST', BASE, { key: t.admin, body: { name: 'abc', issuerPermission: 'Issuer_User', pad: 'x'.repeat(17_000) } });
      expect(big.status).toBe(413);
      expect(big.body).toMatchObject({ errorCode: 'CONTENT_LENGTH_LIMIT_EXCEEDED' });
      expect(await count(t.tenant)).toBe(1);
    });

    it('refuses privilege escalation per side (403 identity_api_key_privilege_escalation), nothing written', async () => {
      const t = await freshTenant('esc');
      const issuerAdmin = await seedKey(api, { tenant: t.tenant, permissions: ['Issuer_Admin'] });
      const mixed = await seedKey(api, { tenant: t.tenant, permissions: ['Issuer_User', 'Verifier_Admin'] });
      const cases: [string, object][] = [
        [issuerAdmin.rawKey, { name: 'abc', verifierPermission: 'Verifier_Auditor' }],
        [mixed.rawKey, { name: 'abc', issuerPermission: 'Issuer_Admin' }],
      ];
      for (const [key, body] of cases) {
        const res = await create(key, body);
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ errorCode: 'identity_api_key_privilege_escalation' });
      }
      expect(await count(t.tenant)).toBe(3);
      // Equal rank and lower ranks are fine.
      expect((await create(mixed.rawKey, { name: 'abc', issuerPermission: 'Issuer_User', verifierPermission: 'Verifier_Admin' })).status).toBe(201);
      expect((await create(issuerAdmin.rawKey, { name: 'abc', issuerPermission: 'Issuer_Auditor' })).status).toBe(201);
    });

    it('refuses creation at the limit (403 identity_api_key_limit_exceeded); revoked and expired keys still count; delete frees a slot', async () => {
      const t = await freshTenant('limit');
      const made: Created[] = [];
      for (let i = 0; i < 4; i += 1) {
        const res = await create(t.admin, { name: `key ${i}`, issuerPermission: 'Issuer_Auditor' });
        expect(res.status).toBe(201);
        made.push(res.body as Created);
      }
      await call(api, 'POST', `${BASE}/${made[0]!.id}/revoke`, { key: t.admin, body: { isRevoked: true } });
      const full = await create(t.admin, { name: 'one too many', issuerPermission: 'Issuer_Auditor' });
      expect(full.status).toBe(403);
      expect(full.body).toMatchObject({ errorCode: 'identity_api_key_limit_exceeded' });
      expect(await count(t.tenant)).toBe(5);
      expect((await call(api, 'GET', `${BASE}/usage`, { key: t.admin })).body).toEqual({ used: 5, limit: 5 });
      expect((await call(api, 'DELETE', `${BASE}/${made[0]!.id}`, { key: t.admin })).status).toBe(204);
      expect((await create(t.admin, { name: 'fits again', issuerPermission: 'Issuer_Auditor' })).status).toBe(201);
      expect(await count(t.tenant)).toBe(5);
    });
  });

  describe('GET (list) and usage', () => {
    it('lists only the caller tenant, newest first, without secrets', async () => {
      const t = await freshTenant('list');
      const other = await freshTenant('list-other');
      const ids: string[] = [];
      for (const name of ['alpha', 'bravo', 'charlie']) {
        clock.advance(1000);
        ids.push(((await create(t.admin, { name, verifierPermission: 'Verifier_User' })).body as Created).id);
      }
      await create(other.admin, { name: 'elsewhere', verifierPermission: 'Verifier_User' });
      const res = await call(api, 'GET', BASE, { key: t.admin });
      expect(res.status).toBe(200);
      const list = res.body as (IdentityApiKey & { rawKey?: string })[];
      expect(list.map((k) => k.id)).toEqual([...ids.reverse(), t.adminId]);
      expect(list.every((k) => k.rawKey === undefined && !('keyHash' in k) && !('tenant' in k))).toBe(true);
      expect(Object.keys(list[0]!).sort()).toEqual(['createdAt', 'createdBy', 'expiresAt', 'id', 'keyMask', 'name', 'permissions', 'revokedAt', 'updatedAt']);
      expect((await call(api, 'GET', `${BASE}/usage`, { key: t.admin })).body).toEqual({ used: 4, limit: 5 });
    });
  });

  describe('POST /{id}/revoke', () => {
    it('revokes (201, revokedAt set), idempotently, and re-activates; the key stops and resumes authenticating', async () => {
      const t = await freshTenant('rev');
      const target = (await create(t.admin, { name: 'to revoke', issuerPermission: 'Issuer_Admin' })).body as Created;
      expect((await call(api, 'GET', `${BASE}/usage`, { key: target.rawKey })).status).toBe(200);
      clock.advance(5000);
      const revokedAt = clock.now().toISOString();
      const first = await call(api, 'POST', `${BASE}/${target.id}/revoke`, { key: t.admin, body: { isRevoked: true } });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ id: target.id, revokedAt, updatedAt: revokedAt });
      expect(await redis.hget(keys.keyEntity(target.id), 'revokedAt')).toBe(revokedAt);
      clock.advance(5000);
      const again = await call(api, 'POST', `${BASE}/${target.id}/revoke`, { key: t.admin, body: { isRevoked: true } });
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect((await call(api, 'GET', `${BASE}/usage`, { key: target.rawKey })).body).toMatchObject({ status: 401, errorCode: 'API_KEY_REVOKED' });

      const back = await call(api, 'POST', `${BASE}/${target.id.toUpperCase()}/revoke`, { key: t.admin, body: { isRevoked: false } });
      expect(back.status).toBe(201);
      expect(back.body).toMatchObject({ id: target.id, revokedAt: null, updatedAt: clock.now().toISOString() });
      expect(await redis.hexists(keys.keyEntity(target.id), 'revokedAt')).toBe(0);
      expect((await call(api, 'GET', `${BASE}/usage`, { key: target.rawKey })).status).toBe(200);
    });

    it.each([
      ['missing isRevoked', {}],
      ['string isRevoked', { isRevoked: 'true' }],
      ['extra field', { isRevoked: true, reason: 'x' }],
    ])('400 for %s, state unchanged', async (_w, body) => {
      const t = await freshTenant('revval');
      const res = await call(api, 'POST', `${BASE}/${t.adminId}/revoke`, { key: t.admin, body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ errorCode: 'VALIDATION_FAILED' });
      expect(await redis.hexists(keys.keyEntity(t.adminId), 'revokedAt')).toBe(0);
    });

    it('400 API_KEY_ID_INVALID for a malformed id, 404 for an unknown id or another tenant\'s key, 403 for a key that outranks the caller', async () => {
      const t = await freshTenant('rev404');
      const other = await freshTenant('rev404-other');
      expect((await call(api, 'POST', `${BASE}/123/revoke`, { key: t.admin, body: { isRevoked: true } })).body).toMatchObject({ status: 400, errorCode: 'API_KEY_ID_INVALID' });
      expect((await call(api, 'POST', `${BASE}/7a0e7e8c-0000-4000-8000-000000000000/revoke`, { key: t.admin, body: { isRevoked: true } })).body).toMatchObject({ status: 404, errorCode: 'API_KEY_NOT_FOUND' });
      expect((await call(api, 'POST', `${BASE}/${other.adminId}/revoke`, { key: t.admin, body: { isRevoked: true } })).body).toMatchObject({ status: 404, errorCode: 'API_KEY_NOT_FOUND' });
      expect(await redis.hexists(keys.keyEntity(other.adminId), 'revokedAt')).toBe(0);
      const issuerAdmin = await seedKey(api, { tenant: t.tenant, permissions: ['Issuer_Admin'] });
      const res = await call(api, 'POST', `${BASE}/${t.adminId}/revoke`, { key: issuerAdmin.rawKey, body: { isRevoked: true } });
      expect(res.body).toMatchObject({ status: 403, errorCode: 'identity_api_key_privilege_escalation' });
      expect(await redis.hexists(keys.keyEntity(t.adminId), 'revokedAt')).toBe(0);
    });
  });

  describe('DELETE /{id}', () => {
    it('204, removes the entity and its indexes, the key stops authenticating; then 404', async () => {
      const t = await freshTenant('del');
      const target = (await create(t.admin, { name: 'to delete', verifierPermission: 'Verifier_Admin' })).body as Created;
      expect((await call(api, 'GET', `${BASE}/usage`, { key: target.rawKey })).status).toBe(200);
      const res = await call(api, 'DELETE', `${BASE}/${target.id}`, { key: t.admin });
      expect(res.status).toBe(204);
      expect(res.body).toBe('');
      expect(await redis.exists(keys.keyEntity(target.id))).toBe(0);
      expect(await redis.hget(keys.keyByHash, hashKey(target.rawKey))).toBeNull();
      expect(await redis.zscore(keys.tenantKeys(t.tenant), target.id)).toBeNull();
      expect((await call(api, 'GET', `${BASE}/usage`, { key: target.rawKey })).body).toMatchObject({ status: 401, errorCode: 'API_KEY_INVALID' });
      expect((await call(api, 'DELETE', `${BASE}/${target.id}`, { key: t.admin })).body).toMatchObject({ status: 404, errorCode: 'API_KEY_NOT_FOUND' });
    });

    it('400 for a malformed id, 404 for another tenant\'s key, 403 for a key that outranks the caller; nothing removed', async () => {
      const t = await freshTenant('del4');
      const other = await freshTenant('del4-other');
      expect((await call(api, 'DELETE', `${BASE}/not-a-uuid`, { key: t.admin })).body).toMatchObject({ status: 400, errorCode: 'API_KEY_ID_INVALID' });
      expect((await call(api, 'DELETE', `${BASE}/${other.adminId}`, { key: t.admin })).body).toMatchObject({ status: 404, errorCode: 'API_KEY_NOT_FOUND' });
      const verifierAdmin = await seedKey(api, { tenant: t.tenant, permissions: ['Verifier_Admin'] });
      expect((await call(api, 'DELETE', `${BASE}/${t.adminId}`, { key: verifierAdmin.rawKey })).body).toMatchObject({ status: 403, errorCode: 'identity_api_key_privilege_escalation' });
      expect(await count(other.tenant)).toBe(1);
      expect(await count(t.tenant)).toBe(2);
    });
  });

  describe('expiry and cross-instance revocation', () => {
    it('a key expires at createdAt + KEY_LIFETIME_DAYS by the clock, also when cached', async () => {
      const t = await freshTenant('exp');
      const key = (await create(t.admin, { name: 'short lived', issuerPermission: 'Issuer_Admin' })).body as Created;
      expect((await call(api, 'GET', `${BASE}/usage`, { key: key.rawKey })).status).toBe(200); // now cached
      clock.set(Date.parse(key.expiresAt) - 1);
      expect((await call(api, 'GET', `${BASE}/usage`, { key: key.rawKey })).status).toBe(200);
      clock.set(Date.parse(key.expiresAt));
      expect((await call(api, 'GET', `${BASE}/usage`, { key: key.rawKey })).body).toMatchObject({ status: 401, errorCode: 'API_KEY_EXPIRED' });
      // Expired keys still count and stay listed until deleted.
      const fresh = await freshTenant('exp-admin');
      expect(fresh).toBeDefined();
      clock.set('2026-11-22T12:00:00.000Z');
    });

    it('a revoke through instance A is refused by instance B (which had the key cached) within 1 s', async () => {
      const t = await freshTenant('xinst');
      const key = (await create(t.admin, { name: 'shared', issuerPermission: 'Issuer_Admin' })).body as Created;
      expect((await call(apiB, 'GET', `${BASE}/usage`, { key: key.rawKey })).status).toBe(200);
      expect(apiB.deps.identity.cache.get(hashKey(key.rawKey))).toBeDefined();
      expect((await call(api, 'POST', `${BASE}/${key.id}/revoke`, { key: t.admin, body: { isRevoked: true } })).status).toBe(201);
      await eventually(async () => (await call(apiB, 'GET', `${BASE}/usage`, { key: key.rawKey })).status === 401, 1000, 10);

      const other = (await create(t.admin, { name: 'shared 2', issuerPermission: 'Issuer_Admin' })).body as Created;
      expect((await call(apiB, 'GET', `${BASE}/usage`, { key: other.rawKey })).status).toBe(200);
      expect((await call(api, 'DELETE', `${BASE}/${other.id}`, { key: t.admin })).status).toBe(204);
      await eventually(async () => (await call(apiB, 'GET', `${BASE}/usage`, { key: other.rawKey })).status === 401, 1000, 10);
    });
  });

  it('stores no raw key anywhere under the prefix (strings, hashes, zsets, lists, streams, BullMQ jobs)', async () => {
    expect(issued.length).toBeGreaterThan(20);
    await assertNoRawKeysStored(redis, prefix, issued);
  });
});
