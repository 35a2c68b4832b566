import { randomUUID } from 'node:crypto';
import { generateRawKey } from '@proofline/identity-domain';
import type { Permission } from '@proofline/identity-domain';
import { seedKey } from '@proofline/identity-testing';
import { ManualClock, loadConfig } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { authorize, callerKey } from './authorize';
import { IdentityService } from './identity-service';

describe('authorize and callerKey (transport-neutral key checks)', () => {
  const prefix = uniquePrefix('idauthz');
  const { redis, cleanup } = testRedis(prefix);
  const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const clock = new ManualClock('2026-03-01T00:00:00.000Z');
  let identity: IdentityService;

  const seed = (permissions: Permission[], opts: { revoked?: boolean } = {}) =>
    seedKey(redis, { prefix, lifetimeDays: config.keyLifetimeDays }, { tenant: 'acme', permissions, createdAt: clock.now(), ...opts });

  beforeAll(async () => {
    identity = await IdentityService.open({ config, logger: createLogger({ level: 'silent', name: 't' }), redis, clock });
  });
  afterAll(async () => {
    await identity.close();
    await cleanup();
  });

  it('maps every key failure to the REST error codes', async () => {
    const revoked = await seed(['Issuer_Admin'], { revoked: true });
    const user = await seed(['Issuer_User']);
    await expect(authorize(identity, undefined)).rejects.toMatchObject({ errorCode: 'API_KEY_MISSING', httpStatus: 401 });
    await expect(authorize(identity, 'idty_short')).rejects.toMatchObject({ errorCode: 'API_KEY_INVALID', httpStatus: 401 });
    await expect(authorize(identity, generateRawKey())).rejects.toMatchObject({ errorCode: 'API_KEY_INVALID', httpStatus: 401 });
    await expect(authorize(identity, revoked.rawKey)).rejects.toMatchObject({ errorCode: 'API_KEY_REVOKED', httpStatus: 401 });
    await expect(authorize(identity, user.rawKey, 'Issuer_Admin', 'Verifier_Admin')).rejects.toMatchObject({ errorCode: 'PERMISSION_DENIED', httpStatus: 403 });
    await expect(authorize(identity, user.rawKey)).resolves.toMatchObject({ keyId: user.id, tenant: 'acme', permissions: ['Issuer_User'] });
    clock.advance(config.keyLifetimeDays * 86_400_000);
    await expect(authorize(identity, user.rawKey)).rejects.toMatchObject({ errorCode: 'API_KEY_EXPIRED', httpStatus: 401 });
  });

  it('callerKey returns the caller its own key, masked', async () => {
    const admin = await seed(['Verifier_Admin']);
    const principal = await authorize(identity, admin.rawKey, 'Issuer_Admin', 'Verifier_Admin');
    const own = await callerKey(identity, principal);
    expect(own).toMatchObject({ id: admin.id, permissions: ['Verifier_Admin'], keyMask: `idty_${'*'.repeat(28)}${admin.rawKey.slice(-4)}` });
    expect(JSON.stringify(own)).not.toContain(admin.rawKey);
    await expect(callerKey(identity, { ...principal, keyId: randomUUID() })).rejects.toMatchObject({ errorCode: 'API_KEY_NOT_FOUND' });
  });
});
