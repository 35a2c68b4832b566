import { ManualClock } from '@proofline/shared-config';
import { generateRawKey } from '@proofline/identity-domain';
import { eventually } from '@proofline/shared-testing';
import { startGraphQL, writeChain } from './testing/fixture';
import type { GraphQLFixture } from './testing/fixture';

// The same keys, permissions and errors as REST (see apps/api records-auth and identity-keys specs).
describe('GraphQL authentication and key queries', () => {
  const clock = new ManualClock('2026-05-01T00:00:00.000Z');
  let f: GraphQLFixture;
  const keys: Record<string, { id: string; rawKey: string }> = {};
  let txId = '';

  beforeAll(async () => {
    f = await startGraphQL({}, clock);
    keys['issuerAdmin'] = await f.seedKey({ permissions: ['Issuer_Admin'], tenant: 'acme', name: 'issuer admin' });
    clock.advance(1000);
    keys['verifierAdmin'] = await f.seedKey({
      permissions: ['Verifier_Admin', 'Issuer_User'],
      tenant: 'acme',
      name: 'verifier admin',
    });
    keys['user'] = await f.seedKey({ permissions: ['Issuer_User'], tenant: 'acme' });
    keys['auditor'] = await f.seedKey({ permissions: ['Verifier_Auditor'], tenant: 'acme' });
    keys['revoked'] = await f.seedKey({ permissions: ['Issuer_Admin'], tenant: 'acme', revoked: true });
    keys['expired'] = await f.seedKey({
      permissions: ['Issuer_Admin'],
      tenant: 'acme',
      createdAt: new Date(clock.now().getTime() - 61 * 86_400_000),
    });
    keys['other'] = await f.seedKey({ permissions: ['Issuer_Admin'], tenant: 'globex' });
    txId = (await writeChain(f.writer, 1, { tenant: 'acme' }))[0] ?? '';
  });
  afterAll(() => f.close());

  const readQueries = () => [
    `{ linkedRecord(txId: "${txId}") { __typename } }`,
    `{ record(txId: "${'a'.repeat(64)}") { __typename } }`,
    '{ block(height: 0) { __typename } }',
    '{ tip { height } }',
    '{ me { tenant } }',
    '{ apiKeys { id } }',
    '{ apiKeyUsage { used } }',
  ];

  it.each([
    ['no key', 'API_KEY_MISSING', undefined],
    ['an empty key', 'API_KEY_MISSING', ''],
    ['a malformed key', 'API_KEY_INVALID', 'not-a-key'],
    ['an unknown key', 'API_KEY_INVALID', generateRawKey()],
    ['a revoked key', 'API_KEY_REVOKED', 'revoked'],
    ['an expired key', 'API_KEY_EXPIRED', 'expired'],
  ])('%s: every protected field answers 401 %s', async (_name, code, which) => {
    const key = which !== undefined && keys[which] ? keys[which].rawKey : which;
    for (const query of readQueries()) {
      const res = await f.gql(query, {}, key);
      expect(res.errors).toHaveLength(1);
      expect(res.errors?.[0]?.extensions).toEqual({ code, status: 401 });
      expect(Object.values(res.data ?? {})).toEqual([null]);
    }
  });

  it('public fields need no key, and one failing field does not hide the others', async () => {
    const res = await f.gql('{ health tip { height } }');
    expect(res.data).toEqual({ health: 'ok', tip: null });
    expect(res.errors?.[0]).toMatchObject({ path: ['tip'], extensions: { code: 'API_KEY_MISSING' } });
  });

  it('reads accept any valid key', async () => {
    for (const who of ['user', 'auditor', 'issuerAdmin']) {
      const res = await f.gql(`{ linkedRecord(txId: "${txId}") { __typename } me { tenant } }`, {}, keys[who]?.rawKey);
      expect(res.errors).toBeUndefined();
      expect(res.data).toEqual({ linkedRecord: { __typename: 'LinkedRecord' }, me: { tenant: 'acme' } });
    }
  });

  it('key queries need Issuer_Admin or Verifier_Admin: else 403 PERMISSION_DENIED', async () => {
    for (const who of ['user', 'auditor']) {
      const res = await f.gql('{ apiKeys { id } apiKeyUsage { used limit } }', {}, keys[who]?.rawKey);
      expect(res.data).toEqual({ apiKeys: null, apiKeyUsage: null });
      expect(res.errors?.map((e) => e.extensions)).toEqual([
        { code: 'PERMISSION_DENIED', status: 403 },
        { code: 'PERMISSION_DENIED', status: 403 },
      ]);
    }
  });

  it("apiKeys: the caller tenant's keys, newest first, masked, as REST lists them", async () => {
    const res = await f.gql<{
      apiKeys: { id: string; name: string; keyMask: string; permissions: string[]; revokedAt: string | null }[];
      apiKeyUsage: { used: number; limit: number };
    }>(
      '{ apiKeys { id name keyMask permissions revokedAt createdAt expiresAt createdBy updatedAt } apiKeyUsage { used limit } }',
      {},
      keys['verifierAdmin']?.rawKey,
    );
    expect(res.errors).toBeUndefined();
    const list = res.data!.apiKeys;
    expect(list.map((k) => k.id).sort()).toEqual(
      ['issuerAdmin', 'verifierAdmin', 'user', 'auditor', 'revoked', 'expired'].map((w) => keys[w]?.id).sort(),
    );
    expect(list.map((k) => k.id)).not.toContain(keys['other']?.id);
    expect(list[list.length - 1]?.id).toBe(keys['expired']?.id); // created 61 days ago: the oldest
    const admin = list.find((k) => k.id === keys['verifierAdmin']?.id);
    expect(admin).toMatchObject({
      name: 'verifier admin',
      permissions: ['Issuer_User', 'Verifier_Admin'],
      revokedAt: null,
    });
    expect(admin?.keyMask).toMatch(/^idty_\*+[A-Za-z0-9]{4}$/);
    expect(list.find((k) => k.id === keys['revoked']?.id)?.revokedAt).not.toBeNull();
    expect(res.data!.apiKeyUsage).toEqual({ used: 6, limit: f.config.keyLimit });

    // the same use case as REST: identical list
    const principal = await f.deps.identity.authenticator.authenticate(keys['verifierAdmin']?.rawKey);
    expect(list.map((k) => k.id)).toEqual((await f.deps.identity.keys.listKeys(principal)).map((k) => k.id));

    const other = await f.gql<{ apiKeyUsage: { used: number } }>('{ apiKeyUsage { used } }', {}, keys['other']?.rawKey);
    expect(other.data?.apiKeyUsage.used).toBe(1);
  });

  it('me: the calling key, never its raw value', async () => {
    const raw = keys['auditor']?.rawKey ?? '';
    const res = await f.gql('{ me { tenant source permissions key { id keyMask permissions name } } }', {}, raw);
    expect(res.data).toEqual({
      me: {
        tenant: 'acme',
        source: 'IDENTITY',
        permissions: ['Verifier_Auditor'],
        key: {
          id: keys['auditor']?.id,
          keyMask: `idty_${'*'.repeat(28)}${raw.slice(-4)}`,
          permissions: ['Verifier_Auditor'],
          name: 'seeded',
        },
      },
    });
    expect(JSON.stringify(res)).not.toContain(raw);
  });

  it('a key revoked after it was used stops working at once (shared cache invalidation)', async () => {
    const k = await f.seedKey({ permissions: ['Issuer_User'], tenant: 'acme' });
    expect((await f.gql('{ me { tenant } }', {}, k.rawKey)).errors).toBeUndefined();
    const admin = await f.deps.identity.authenticator.authenticate(keys['issuerAdmin']?.rawKey);
    // revoked through the REST use case
    await f.deps.identity.keys.revokeKey(admin, k.id, true);
    await eventually(
      async () => (await f.gql('{ me { tenant } }', {}, k.rawKey)).errors?.[0]?.extensions?.code === 'API_KEY_REVOKED',
      5000,
    );
  });
});
