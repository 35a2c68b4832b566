import { hashKey } from '@proofline/identity-domain';
import type { IdentityApiKey } from '@proofline/identity-domain';
import { eventually } from '@proofline/shared-testing';
import { call, seedKey } from '../testing/harness';
import type { RunningApi } from '../testing/harness';
import { assertNoRawKeysStored } from '../testing/raw-key-scan';
import { IDENTITY_KEYS_BASE as BASE, identityKeysSuite } from '../testing/identity-keys-suite';
import type { Created } from '../testing/identity-keys-suite';

describe('identity API key endpoints: revoke, delete, expiry, cross-instance revocation', () => {
  const s = identityKeysSuite('idkeysm');
  const { redis, keys, clock, issued, freshTenant, count, create } = s;
  let api: RunningApi;
  let apiB: RunningApi;
  beforeAll(() => {
    api = s.api;
    apiB = s.apiB;
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
      expect((await call(api, 'GET', `${BASE}/usage`, { key: target.rawKey })).body).toMatchObject({
        status: 401,
        errorCode: 'API_KEY_REVOKED',
      });

      const back = await call(api, 'POST', `${BASE}/${target.id.toUpperCase()}/revoke`, {
        key: t.admin,
        body: { isRevoked: false },
      });
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

    it("400 API_KEY_ID_INVALID for a malformed id, 404 for an unknown id or another tenant's key, 403 for a key that outranks the caller", async () => {
      const t = await freshTenant('rev404');
      const other = await freshTenant('rev404-other');
      expect(
        (await call(api, 'POST', `${BASE}/123/revoke`, { key: t.admin, body: { isRevoked: true } })).body,
      ).toMatchObject({ status: 400, errorCode: 'API_KEY_ID_INVALID' });
      expect(
        (
          await call(api, 'POST', `${BASE}/7a0e7e8c-0000-4000-8000-000000000000/revoke`, {
            key: t.admin,
            body: { isRevoked: true },
          })
        ).body,
      ).toMatchObject({ status: 404, errorCode: 'API_KEY_NOT_FOUND' });
      expect(
        (await call(api, 'POST', `${BASE}/${other.adminId}/revoke`, { key: t.admin, body: { isRevoked: true } })).body,
      ).toMatchObject({ status: 404, errorCode: 'API_KEY_NOT_FOUND' });
      expect(await redis.hexists(keys.keyEntity(other.adminId), 'revokedAt')).toBe(0);
      const issuerAdmin = await seedKey(api, { tenant: t.tenant, permissions: ['Issuer_Admin'] });
      const res = await call(api, 'POST', `${BASE}/${t.adminId}/revoke`, {
        key: issuerAdmin.rawKey,
        body: { isRevoked: true },
      });
      expect(res.body).toMatchObject({ status: 403, errorCode: 'identity_api_key_privilege_escalation' });
      expect(await redis.hexists(keys.keyEntity(t.adminId), 'revokedAt')).toBe(0);
    });
  });

  describe('DELETE /{id}', () => {
    it('204, removes the entity and its indexes, the key stops authenticating; then 404', async () => {
      const t = await freshTenant('del');
      const target = (await create(t.admin, { name: 'to delete', verifierPermission: 'Verifier_Admin' }))
        .body as Created;
      expect((await call(api, 'GET', `${BASE}/usage`, { key: target.rawKey })).status).toBe(200);
      const res = await call(api, 'DELETE', `${BASE}/${target.id}`, { key: t.admin });
      expect(res.status).toBe(204);
      expect(res.body).toBe('');
      expect(await redis.exists(keys.keyEntity(target.id))).toBe(0);
      expect(await redis.hget(keys.keyByHash, hashKey(target.rawKey))).toBeNull();
      expect(await redis.zscore(keys.tenantKeys(t.tenant), target.id)).toBeNull();
      expect((await call(api, 'GET', `${BASE}/usage`, { key: target.rawKey })).body).toMatchObject({
        status: 401,
        errorCode: 'API_KEY_INVALID',
      });
      expect((await call(api, 'DELETE', `${BASE}/${target.id}`, { key: t.admin })).body).toMatchObject({
        status: 404,
        errorCode: 'API_KEY_NOT_FOUND',
      });
    });

    it("400 for a malformed id, 404 for another tenant's key, 403 for a key that outranks the caller; nothing removed", async () => {
      const t = await freshTenant('del4');
      const other = await freshTenant('del4-other');
      expect((await call(api, 'DELETE', `${BASE}/not-a-uuid`, { key: t.admin })).body).toMatchObject({
        status: 400,
        errorCode: 'API_KEY_ID_INVALID',
      });
      expect((await call(api, 'DELETE', `${BASE}/${other.adminId}`, { key: t.admin })).body).toMatchObject({
        status: 404,
        errorCode: 'API_KEY_NOT_FOUND',
      });
      const verifierAdmin = await seedKey(api, { tenant: t.tenant, permissions: ['Verifier_Admin'] });
      expect((await call(api, 'DELETE', `${BASE}/${t.adminId}`, { key: verifierAdmin.rawKey })).body).toMatchObject({
        status: 403,
        errorCode: 'identity_api_key_privilege_escalation',
      });
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
      expect((await call(api, 'GET', `${BASE}/usage`, { key: key.rawKey })).body).toMatchObject({
        status: 401,
        errorCode: 'API_KEY_EXPIRED',
      });
      // Expired keys still count and stay listed until deleted: stored, indexed, counted, listed.
      expect(await count(t.tenant)).toBe(2);
      expect(await redis.zscore(keys.tenantKeys(t.tenant), key.id)).not.toBeNull();
      expect(await redis.hget(keys.keyEntity(key.id), 'expiresAt')).toBe(key.expiresAt);
      const lister = await seedKey(api, { tenant: t.tenant, permissions: ['Issuer_Admin'], createdAt: clock.now() });
      issued.push(lister.rawKey);
      expect((await call(api, 'GET', `${BASE}/usage`, { key: lister.rawKey })).body).toEqual({ used: 3, limit: 5 });
      const listed = (await call(api, 'GET', BASE, { key: lister.rawKey })).body as IdentityApiKey[];
      expect(listed.find((k) => k.id === key.id)).toMatchObject({
        id: key.id,
        expiresAt: key.expiresAt,
        revokedAt: null,
      });
      expect(listed.map((k) => k.id).sort()).toEqual([t.adminId, key.id, lister.id].sort());
    });

    it('a revoke through instance A is refused by instance B (which had the key cached) within 1 s', async () => {
      const t = await freshTenant('xinst');
      const key = (await create(t.admin, { name: 'shared', issuerPermission: 'Issuer_Admin' })).body as Created;
      expect((await call(apiB, 'GET', `${BASE}/usage`, { key: key.rawKey })).status).toBe(200);
      expect(apiB.deps.identity.authenticator.cache.get(hashKey(key.rawKey))).toBeDefined();
      expect(
        (await call(api, 'POST', `${BASE}/${key.id}/revoke`, { key: t.admin, body: { isRevoked: true } })).status,
      ).toBe(201);
      await eventually(
        async () => (await call(apiB, 'GET', `${BASE}/usage`, { key: key.rawKey })).status === 401,
        1000,
        10,
      );

      const other = (await create(t.admin, { name: 'shared 2', issuerPermission: 'Issuer_Admin' })).body as Created;
      expect((await call(apiB, 'GET', `${BASE}/usage`, { key: other.rawKey })).status).toBe(200);
      expect((await call(api, 'DELETE', `${BASE}/${other.id}`, { key: t.admin })).status).toBe(204);
      await eventually(
        async () => (await call(apiB, 'GET', `${BASE}/usage`, { key: other.rawKey })).status === 401,
        1000,
        10,
      );
    });
  });

  it('stores no raw key anywhere under the prefix (strings, hashes, zsets, lists, streams, BullMQ jobs)', async () => {
    const t = await freshTenant('raw');
    const made: Created[] = [];
    for (const target of [api, apiB, api])
      made.push((await create(t.admin, { name: 'raw scan', issuerPermission: 'Issuer_User' }, target)).body as Created);
    expect(made.every((k) => typeof k.rawKey === 'string' && k.rawKey.startsWith('idty_'))).toBe(true);
    expect(
      (await call(api, 'POST', `${BASE}/${made[0]!.id}/revoke`, { key: t.admin, body: { isRevoked: true } })).status,
    ).toBe(201);
    expect((await call(apiB, 'DELETE', `${BASE}/${made[1]!.id}`, { key: t.admin })).status).toBe(204);
    expect(issued).toHaveLength(4);
    await assertNoRawKeysStored(redis, s.prefix, issued);
  });
});
