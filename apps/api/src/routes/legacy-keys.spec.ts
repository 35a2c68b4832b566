import { identityKeys } from '@proofline/identity-data-access';
import { createBootstrapKey, importLegacyKeys } from '@proofline/identity-feature';
import type { RunningKeyWorker } from '@proofline/identity-feature';
import { hashKey, legacyKeyUuid } from '@proofline/identity-domain';
import { ManualClock } from '@proofline/shared-config';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { assertAuthMatrix } from '../testing/auth-matrix';
import { call, startApi, startKeyWorker } from '../testing/harness';
import type { CallResult, RunningApi } from '../testing/harness';
import { assertNoRawKeysStored } from '../testing/raw-key-scan';

const LEGACY = '/api/v1/psp/product-manager/customer-user-api-keys';
const IDENTITY = '/api/v1/auth/identity-api-keys';
const SUNSET = '2026-12-01T00:00:00Z';
const SUNSET_HTTP = 'Tue, 01 Dec 2026 00:00:00 GMT';

function expectLegacyHeaders(res: CallResult, successor: string): void {
  expect({
    deprecation: res.headers.get('deprecation'),
    sunset: res.headers.get('sunset'),
    link: res.headers.get('link'),
  }).toEqual({
    deprecation: 'true',
    sunset: SUNSET_HTTP,
    link: `<${successor}>; rel="successor-version"`,
  });
}

describe('legacy customer user API key endpoints', () => {
  const prefix = uniquePrefix('legacy');
  const { redis, cleanup } = testRedis(prefix);
  const keys = identityKeys(prefix);
  const clock = new ManualClock('2026-11-22T12:00:00.000Z');
  const env = { KEY_LIMIT: '5', LEGACY_SUNSET: SUNSET };
  const issued: string[] = [];
  let api: RunningApi;
  let worker: RunningKeyWorker;

  let nextLegacyId = 1000;
  /** A tenant with an admin key and two imported legacy keys: `a` Active (Issuer_Admin), `b` Disabled. */
  async function tenantWithLegacy(label: string) {
    const a = nextLegacyId++;
    const b = nextLegacyId++;
    const tenant = `${label}-${Math.random().toString(36).slice(2, 8)}`;
    const admin = await createBootstrapKey({ redis, config: api.deps.config, clock }, tenant);
    const legacyRaw = `legacy-${label}-0123456789abcdef`;
    issued.push(admin, legacyRaw);
    const report = await importLegacyKeys(
      { redis, config: api.deps.config, clock },
      [
        {
          id: a,
          name: 'old active',
          status: 'Active',
          createdAt: '2026-01-01T00:00:00Z',
          rawKey: legacyRaw,
          permissions: ['Issuer_Admin'],
        },
        {
          id: String(b),
          name: 'old disabled',
          status: 'Disabled',
          createdAt: '2026-02-01T00:00:00Z',
          keyHash: hashKey(`never-seen-${label}-raw-key`),
        },
      ],
      { tenant },
    );
    expect(report).toEqual({ total: 2, imported: 2, skipped: 0, conflicts: [] });
    return { tenant, admin, legacyRaw, a, b };
  }

  beforeAll(async () => {
    api = await startApi({ prefix, clock, env });
    worker = await startKeyWorker({ prefix, env });
  });
  afterAll(async () => {
    await worker.close();
    await api.close();
    await cleanup();
  });
  afterEach(() => clock.set('2026-11-22T12:00:00.000Z'));

  describe('auth matrix (every route, with the deprecation headers on each refusal)', () => {
    const admins = [['Issuer_Admin'], ['Verifier_Admin']] as const;
    it.each([
      ['POST', LEGACY, { name: 'abc' }, IDENTITY],
      ['GET', LEGACY, undefined, IDENTITY],
      ['GET', `${LEGACY}/usage`, undefined, `${IDENTITY}/usage`],
      ['DELETE', `${LEGACY}/5`, undefined, `${IDENTITY}/${legacyKeyUuid(5)}`],
      ['PATCH', `${LEGACY}/5`, { status: 'Disabled' }, `${IDENTITY}/${legacyKeyUuid(5)}/revoke`],
    ])('%s %s', async (method, path, body, successor) => {
      await assertAuthMatrix(api, {
        method,
        path,
        body,
        allowed: admins,
        expectHeaders: { deprecation: 'true', sunset: SUNSET_HTTP, link: `<${successor}>; rel="successor-version"` },
      });
    });
  });

  it('GET lists identity and imported legacy keys in the legacy shape, newest first', async () => {
    const t = await tenantWithLegacy('list');
    const res = await call(api, 'GET', LEGACY, { key: t.admin });
    expect(res.status).toBe(200);
    expectLegacyHeaders(res, IDENTITY);
    const list = res.body as Record<string, unknown>[];
    expect(list).toHaveLength(3);
    expect(list[1]).toEqual({
      id: t.b,
      name: 'old disabled',
      status: 'Disabled',
      createdAt: '2026-02-01T00:00:00.000Z',
      expiresAt: new Date(clock.now().getTime() + 60 * 86_400_000).toISOString(),
      keyMask: `idty_${'*'.repeat(32)}`,
      permissions: ['Issuer_User'],
    });
    expect(list[2]).toMatchObject({
      id: t.a,
      status: 'Active',
      keyMask: `idty_${'*'.repeat(28)}cdef`,
      permissions: ['Issuer_Admin'],
    });
    expect(list[0]).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'bootstrap',
      status: 'Active',
    });
    const usage = await call(api, 'GET', `${LEGACY}/usage`, { key: t.admin });
    expect(usage.body).toEqual({ used: 3, limit: 5 });
    expectLegacyHeaders(usage, `${IDENTITY}/usage`);
  });

  it('imported legacy keys authenticate while Active and unexpired, and appear in the identity list under their stable UUID', async () => {
    const t = await tenantWithLegacy('auth');
    expect((await call(api, 'GET', `${IDENTITY}/usage`, { key: t.legacyRaw })).body).toEqual({ used: 3, limit: 5 });
    const list = (await call(api, 'GET', IDENTITY, { key: t.admin })).body as {
      id: string;
      name: string;
      revokedAt: string | null;
      createdBy: string;
    }[];
    expect(list.find((k) => k.id === legacyKeyUuid(t.a))).toMatchObject({
      name: 'old active',
      revokedAt: null,
      createdBy: 'legacy-import',
    });
    expect(list.find((k) => k.id === legacyKeyUuid(t.b))).toMatchObject({
      name: 'old disabled',
      revokedAt: clock.now().toISOString(),
    });
  });

  it("POST issues an identity key (UUID) with the caller's own permissions, 201 + rawKey, counted toward the limit", async () => {
    const t = await tenantWithLegacy('create');
    const res = await call(api, 'POST', LEGACY, { key: t.legacyRaw, body: { name: 'from legacy' } });
    expect(res.status).toBe(201);
    expectLegacyHeaders(res, IDENTITY);
    const created = res.body as { id: string; rawKey: string };
    issued.push(created.rawKey);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name: 'from legacy',
      status: 'Active',
      createdAt: clock.now().toISOString(),
      expiresAt: new Date(clock.now().getTime() + 60 * 86_400_000).toISOString(),
      keyMask: `idty_${'*'.repeat(28)}${created.rawKey.slice(-4)}`,
      permissions: ['Issuer_Admin'],
      rawKey: expect.stringMatching(/^idty_[A-Za-z0-9]{32}$/),
    });
    expect(await redis.hget(keys.keyEntity(created.id), 'permissions')).toBe('Issuer_Admin');
    expect(await redis.zcard(keys.tenantKeys(t.tenant))).toBe(4);
    const bad = await call(api, 'POST', LEGACY, { key: t.admin, body: { name: 'x' } });
    expect(bad.status).toBe(400);
    expectLegacyHeaders(bad, IDENTITY);
    const unknown = await call(api, 'POST', LEGACY, {
      key: t.admin,
      body: { name: 'abc', permissions: ['Issuer_Admin'] },
    });
    expect(unknown.body).toMatchObject({ status: 400, detail: expect.stringContaining('unknown field "permissions"') });
    expect(await redis.zcard(keys.tenantKeys(t.tenant))).toBe(4);
  });

  it('PATCH disables and re-activates a numeric id (200, legacy shape); DELETE removes it (204)', async () => {
    const t = await tenantWithLegacy('patch');
    const off = await call(api, 'PATCH', `${LEGACY}/${t.a}`, { key: t.admin, body: { status: 'Disabled' } });
    expect(off.status).toBe(200);
    expectLegacyHeaders(off, `${IDENTITY}/${legacyKeyUuid(t.a)}/revoke`);
    expect(off.body).toMatchObject({ id: t.a, status: 'Disabled' });
    expect(await redis.hget(keys.keyEntity(legacyKeyUuid(t.a)), 'revokedAt')).toBe(clock.now().toISOString());
    expect((await call(api, 'GET', `${IDENTITY}/usage`, { key: t.legacyRaw })).body).toMatchObject({
      errorCode: 'API_KEY_REVOKED',
    });
    const on = await call(api, 'PATCH', `${LEGACY}/${t.a}`, { key: t.admin, body: { status: 'Active' } });
    expect(on.body).toMatchObject({ id: t.a, status: 'Active' });
    expect((await call(api, 'GET', `${IDENTITY}/usage`, { key: t.legacyRaw })).status).toBe(200);

    const badStatus = await call(api, 'PATCH', `${LEGACY}/${t.a}`, { key: t.admin, body: { status: 'disabled' } });
    expect(badStatus.body).toMatchObject({ status: 400, detail: expect.stringContaining('Active or Disabled') });
    expectLegacyHeaders(badStatus, `${IDENTITY}/${legacyKeyUuid(t.a)}/revoke`);

    const del = await call(api, 'DELETE', `${LEGACY}/${t.b}`, { key: t.admin });
    expect(del.status).toBe(204);
    expectLegacyHeaders(del, `${IDENTITY}/${legacyKeyUuid(t.b)}`);
    expect(await redis.exists(keys.keyEntity(legacyKeyUuid(t.b)))).toBe(0);
    expect(await redis.zcard(keys.tenantKeys(t.tenant))).toBe(2);
    const gone = await call(api, 'DELETE', `${LEGACY}/${t.b}`, { key: t.admin });
    expect(gone.body).toMatchObject({ status: 404, errorCode: 'API_KEY_NOT_FOUND' });
    expectLegacyHeaders(gone, `${IDENTITY}/${legacyKeyUuid(t.b)}`);
  });

  it('DELETE/PATCH with a UUID: 400 saying the key is managed by the identity API key system; other ids: 400; nothing changes', async () => {
    const t = await tenantWithLegacy('uuid');
    const list = (await call(api, 'GET', IDENTITY, { key: t.admin })).body as { id: string }[];
    const uuid = list[0]!.id;
    for (const [method, body, successor] of [
      ['DELETE', undefined, `${IDENTITY}/${uuid}`],
      ['PATCH', { status: 'Disabled' }, `${IDENTITY}/${uuid}/revoke`],
    ] as const) {
      const res = await call(api, method, `${LEGACY}/${uuid}`, { key: t.admin, ...(body ? { body } : {}) });
      expect(res.status).toBe(400);
      expect((res.body as { detail: string }).detail).toMatch(
        /managed by the identity API key system and must be managed through the identity API key endpoints/,
      );
      expectLegacyHeaders(res, successor);
    }
    for (const id of ['abc', '0', '-1', '1.5', '12345678901234567']) {
      const res = await call(api, 'DELETE', `${LEGACY}/${id}`, { key: t.admin });
      expect({ id, status: res.status, code: (res.body as { errorCode: string }).errorCode }).toEqual({
        id,
        status: 400,
        code: 'API_KEY_ID_INVALID',
      });
      expectLegacyHeaders(res, `${IDENTITY}/{id}`);
    }
    expect(await redis.zcard(keys.tenantKeys(t.tenant))).toBe(3);
    expect(await redis.hexists(keys.keyEntity(uuid), 'revokedAt')).toBe(0);
  });

  it('every error response carries the headers: 415, 400 bad JSON, 413, unknown sub-route 404', async () => {
    const t = await tenantWithLegacy('errs');
    const r415 = await call(api, 'POST', LEGACY, { key: t.admin, body: 'name', contentType: 'text/plain' });
    expect(r415.status).toBe(415);
    expectLegacyHeaders(r415, IDENTITY);
    const r400 = await call(api, 'POST', LEGACY, { key: t.admin, body: '{nope' });
    expect(r400.body).toMatchObject({ status: 400, errorCode: 'BODY_INVALID_JSON' });
    expectLegacyHeaders(r400, IDENTITY);
    const r413 = await call(api, 'POST', LEGACY, { key: t.admin, body: { name: 'x'.repeat(20_000) } });
    expect(r413.status).toBe(413);
    expectLegacyHeaders(r413, IDENTITY);
    const r404 = await call(api, 'GET', `${LEGACY}/1/extra`, { key: t.admin });
    expect(r404.status).toBe(404);
    expectLegacyHeaders(r404, IDENTITY);
  });

  it('from the sunset instant every legacy call is 410 LEGACY_ENDPOINT_REMOVED with the headers; legacy keys stay manageable by UUID', async () => {
    const t = await tenantWithLegacy('sunset');
    clock.set(Date.parse(SUNSET) - 1);
    expect((await call(api, 'GET', LEGACY, { key: t.admin })).status).toBe(200);
    clock.set(SUNSET);
    for (const [method, path, successor] of [
      ['GET', LEGACY, IDENTITY],
      ['POST', LEGACY, IDENTITY],
      ['GET', `${LEGACY}/usage`, `${IDENTITY}/usage`],
      ['DELETE', `${LEGACY}/${t.a}`, `${IDENTITY}/${legacyKeyUuid(t.a)}`],
      ['PATCH', `${LEGACY}/${t.a}`, `${IDENTITY}/${legacyKeyUuid(t.a)}/revoke`],
    ] as const) {
      for (const key of [t.admin, undefined]) {
        const res = await call(api, method, path, {
          ...(key ? { key } : {}),
          ...(method === 'POST' ? { body: { name: 'late' } } : {}),
        });
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 410 });
        expect(res.body).toMatchObject({ errorCode: 'LEGACY_ENDPOINT_REMOVED' });
        expectLegacyHeaders(res, successor);
      }
    }
    expect(await redis.zcard(keys.tenantKeys(t.tenant))).toBe(3);
    // After the sunset the identity endpoints manage the legacy keys by their stable UUIDs.
    const revoke = await call(api, 'POST', `${IDENTITY}/${legacyKeyUuid(t.a)}/revoke`, {
      key: t.admin,
      body: { isRevoked: true },
    });
    expect(revoke.body).toMatchObject({ id: legacyKeyUuid(t.a), revokedAt: clock.now().toISOString() });
    expect((await call(api, 'DELETE', `${IDENTITY}/${legacyKeyUuid(t.b)}`, { key: t.admin })).status).toBe(204);
    expect(await redis.zcard(keys.tenantKeys(t.tenant))).toBe(2);
  });

  it('with the default LEGACY_SUNSET (2026-10-01) the endpoints are already gone on 2026-11-22', async () => {
    const other = await startApi({ prefix, clock });
    const res = await call(other, 'GET', LEGACY);
    expect(res.status).toBe(410);
    expect(res.headers.get('sunset')).toBe('Thu, 01 Oct 2026 00:00:00 GMT');
    await other.close();
  });

  it('stores no raw key anywhere under the prefix', async () => {
    await assertNoRawKeysStored(redis, prefix, issued);
  });
});
