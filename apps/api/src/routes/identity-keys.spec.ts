import { hashKey } from '@proofline/identity-domain';
import type { IdentityApiKey } from '@proofline/identity-domain';
import { assertAuthMatrix } from '../testing/auth-matrix';
import { call, seedKey } from '../testing/harness';
import type { RunningApi } from '../testing/harness';
import { IDENTITY_KEYS_BASE as BASE, identityKeysSuite } from '../testing/identity-keys-suite';
import type { Created } from '../testing/identity-keys-suite';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DAY = 86_400_000;

describe('identity API key endpoints: auth, create, list and usage', () => {
  const s = identityKeysSuite('idkeys');
  const { redis, keys, clock, freshTenant, count, create } = s;
  let api: RunningApi;
  beforeAll(() => {
    api = s.api;
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
      const res = await create(t.admin, {
        name: '  ci deploy key ',
        issuerPermission: 'Issuer_User',
        verifierPermission: 'Verifier_Auditor',
      });
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
      expect(stored).toMatchObject({
        id: key.id,
        tenant: t.tenant,
        keyHash: hashKey(key.rawKey),
        last4: key.rawKey.slice(-4),
        permissions: 'Issuer_User|Verifier_Auditor',
        source: 'identity',
      });
      expect(JSON.stringify(stored)).not.toContain(key.rawKey);
      expect(await redis.hget(keys.keyByHash, hashKey(key.rawKey))).toBe(key.id);
      expect(await redis.zscore(keys.tenantKeys(t.tenant), key.id)).toBe(String(clock.now().getTime()));
      expect(await count(t.tenant)).toBe(2);

      // The new key authenticates (it lacks admin rights, so listing is 403, not 401).
      expect((await call(api, 'GET', BASE, { key: key.rawKey })).body).toMatchObject({
        status: 403,
        errorCode: 'PERMISSION_DENIED',
      });
      // The raw key is never shown again.
      const list = await call(api, 'GET', BASE, { key: t.admin });
      expect(JSON.stringify(list.body)).not.toContain(key.rawKey);
    });

    // A refused create answers problem+json with the code and detail, and stores no key.
    const expectCreateRefused = async (body: unknown, errorCode: string, detail: string) => {
      const t = await freshTenant('val');
      const res = await create(t.admin, body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body).toMatchObject({ status: 400, errorCode, detail: expect.stringContaining(detail) });
      expect(await count(t.tenant)).toBe(1);
    };
    const nameLength = 'name: must be 3 to 32 characters';

    it.each([
      ['neither side', { name: 'abc' }, 'at least one of issuerPermission and verifierPermission is required'],
      ['short name', { name: 'ab', issuerPermission: 'Issuer_User' }, nameLength],
      ['blank padded name', { name: '  a  ', issuerPermission: 'Issuer_User' }, nameLength],
      ['long name', { name: 'x'.repeat(33), issuerPermission: 'Issuer_User' }, nameLength],
      ['non-string name', { name: 42, issuerPermission: 'Issuer_User' }, 'name: must be a string'],
      [
        'wrong case',
        { name: 'abc', issuerPermission: 'issuer_admin' },
        'issuerPermission: must be one of Issuer_Admin, Issuer_User, Issuer_Auditor',
      ],
      [
        'wrong side',
        { name: 'abc', verifierPermission: 'Issuer_User' },
        'verifierPermission: must be one of Verifier_Admin, Verifier_User, Verifier_Auditor',
      ],
      ['typo field', { name: 'abc', issuerPermissions: 'Issuer_User' }, 'unknown field "issuerPermissions"'],
      ['array body', [{ name: 'abc' }], 'the body must be a JSON object'],
      ['no body', undefined, 'a JSON object body is required'],
    ])('400 VALIDATION_FAILED for %s, nothing written', async (_what, body, detail) => {
      await expectCreateRefused(body, 'VALIDATION_FAILED', detail);
    });

    it.each([
      ['scalar body (the JSON parser is strict)', '"abc"'],
      ['invalid JSON', '{"name": '],
    ])('400 BODY_INVALID_JSON for %s, nothing written', async (_what, body) => {
      await expectCreateRefused(body, 'BODY_INVALID_JSON', 'not valid JSON');
    });

    it('415 for another content type, 413 over 16 kB; nothing written', async () => {
      const t = await freshTenant('media');
      const text = await call(api, 'POST', BASE, { key: t.admin, body: 'name=abc', contentType: 'text/plain' });
      expect(text.status).toBe(415);
      expect(text.body).toMatchObject({ errorCode: 'UNSUPPORTED_MEDIA_TYPE' });
      const big = await call(api, 'POST', BASE, {
        key: t.admin,
        body: { name: 'abc', issuerPermission: 'Issuer_User', pad: 'x'.repeat(17_000) },
      });
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
      expect(
        (
          await create(mixed.rawKey, {
            name: 'abc',
            issuerPermission: 'Issuer_User',
            verifierPermission: 'Verifier_Admin',
          })
        ).status,
      ).toBe(201);
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
      expect(Object.keys(list[0]!).sort()).toEqual([
        'createdAt',
        'createdBy',
        'expiresAt',
        'id',
        'keyMask',
        'name',
        'permissions',
        'revokedAt',
        'updatedAt',
      ]);
      expect((await call(api, 'GET', `${BASE}/usage`, { key: t.admin })).body).toEqual({ used: 4, limit: 5 });
    });
  });
});
