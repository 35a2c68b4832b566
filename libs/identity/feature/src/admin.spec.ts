import { identityKeys } from '@proofline/identity-data-access';
import {
  IDENTITY_KEY_PATTERN,
  bootstrapKeyUuid,
  generateRawKey,
  hashKey,
  legacyKeyUuid,
} from '@proofline/identity-domain';
import { ManualClock, loadConfig } from '@proofline/shared-config';
import { AppError } from '@proofline/shared-errors';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { createBootstrapKey, importLegacyKeys, registerBootstrapKey } from './admin';

describe('identity admin functions (bootstrap, legacy import)', () => {
  const prefix = uniquePrefix('idadmin');
  const { redis, cleanup } = testRedis(prefix);
  const keys = identityKeys(prefix);
  const config = loadConfig({ REDIS_PREFIX: prefix, KEY_LIMIT: '2' });
  const clock = new ManualClock('2026-11-22T00:00:00.000Z');
  const deps = { redis, config, clock };
  afterAll(cleanup);

  it('registerBootstrapKey is idempotent by hash, defaults to tenant default with both admin permissions, ignores the limit', async () => {
    const raw = generateRawKey();
    const first = await registerBootstrapKey(deps, raw);
    expect(first).toEqual({ id: bootstrapKeyUuid(hashKey(raw)), tenant: 'default', created: true });
    clock.advance(1000);
    expect(await registerBootstrapKey(deps, raw)).toEqual({ ...first, created: false });
    expect(await redis.hgetall(keys.keyEntity(first.id))).toMatchObject({
      tenant: 'default',
      permissions: 'Issuer_Admin|Verifier_Admin',
      createdAt: '2026-11-22T00:00:00.000Z',
      expiresAt: '2027-01-21T00:00:00.000Z',
      createdBy: 'bootstrap',
    });
    for (let i = 0; i < 3; i += 1) await registerBootstrapKey(deps, generateRawKey());
    expect(await redis.zcard(keys.tenantKeys('default'))).toBe(4);
    await expect(registerBootstrapKey(deps, 'idty_short')).rejects.toBeInstanceOf(AppError);
    await expect(registerBootstrapKey(deps, generateRawKey(), { tenant: 'bad tenant!' })).rejects.toMatchObject({
      errorCode: 'TENANT_INVALID',
    });
  });

  it('createBootstrapKey returns a new raw key registered for the tenant', async () => {
    const raw = await createBootstrapKey(deps, 'acme');
    expect(raw).toMatch(IDENTITY_KEY_PATTERN);
    const id = await redis.hget(keys.keyByHash, hashKey(raw));
    expect(await redis.hget(keys.keyEntity(id!), 'tenant')).toBe('acme');
  });

  it('importLegacyKeys validates everything first, then imports idempotently by numeric id', async () => {
    const items = [
      { id: 7, name: 'seven', status: 'Active', createdAt: '2025-05-05T05:05:05Z', rawKey: 'legacy_key_seven_0000' },
      {
        id: 8,
        name: 'eight',
        status: 'Disabled',
        createdAt: '2025-06-06T00:00:00+02:00',
        expiresAt: '2027-01-01T00:00:00Z',
        keyHash: 'b'.repeat(64),
        permissions: ['Verifier_User', 'Issuer_Auditor'],
      },
    ];
    const bad = [...items, { id: 9, name: 'x', status: 'Active', createdAt: 'yesterday', rawKey: 'short' }];
    await expect(importLegacyKeys(deps, bad, { tenant: 'legacy' })).rejects.toMatchObject({
      errorCode: 'VALIDATION_FAILED',
      detail: expect.stringContaining('item 2.name: must be 3 to 32 characters'),
    });
    expect(await redis.zcard(keys.tenantKeys('legacy'))).toBe(0);
    await expect(importLegacyKeys(deps, { not: 'an array' })).rejects.toMatchObject({ errorCode: 'VALIDATION_FAILED' });

    expect(await importLegacyKeys(deps, items, { tenant: 'legacy' })).toEqual({
      total: 2,
      imported: 2,
      skipped: 0,
      conflicts: [],
    });
    expect(await importLegacyKeys(deps, items, { tenant: 'legacy' })).toEqual({
      total: 2,
      imported: 0,
      skipped: 2,
      conflicts: [],
    });
    expect(await redis.hgetall(keys.keyEntity(legacyKeyUuid(7)))).toMatchObject({
      legacyId: '7',
      source: 'legacy',
      keyHash: hashKey('legacy_key_seven_0000'),
      last4: '0000',
      permissions: 'Issuer_User',
      createdAt: '2025-05-05T05:05:05.000Z',
      expiresAt: '2027-01-21T00:00:01.000Z',
    });
    expect(await redis.hgetall(keys.keyEntity(legacyKeyUuid(8)))).toMatchObject({
      permissions: 'Issuer_Auditor|Verifier_User',
      createdAt: '2025-06-05T22:00:00.000Z',
      expiresAt: '2027-01-01T00:00:00.000Z',
      revokedAt: clock.now().toISOString(),
    });
    // The same hash under another numeric id is a conflict, not a second key.
    expect(await importLegacyKeys(deps, [{ ...items[0], id: 70 }], { tenant: 'legacy' })).toEqual({
      total: 1,
      imported: 0,
      skipped: 0,
      conflicts: [70],
    });
    expect(await redis.zcard(keys.tenantKeys('legacy'))).toBe(2);
  });
});
