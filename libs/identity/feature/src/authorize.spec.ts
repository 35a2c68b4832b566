import { randomUUID } from 'node:crypto';
import type { RedisConnection } from 'redis-om';
import { KeyWriter, closeOmConnection, openOmConnection } from '@proofline/identity-data-access';
import { expiryFor, generateRawKey, issueKey } from '@proofline/identity-domain';
import type { Permission } from '@proofline/identity-domain';
import { ManualClock, loadConfig } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import { testRedis, testRedisClient, testRedisDeployment, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { authorize, callerKey } from './authorize';
import { createIdentity } from './create-identity';
import type { Identity } from './create-identity';

describe('authorize and callerKey (transport-neutral key checks)', () => {
  const prefix = uniquePrefix('idauthz');
  const { redis, cleanup } = testRedis(prefix);
  const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const clock = new ManualClock('2026-03-01T00:00:00.000Z');
  // The spec is the composition root here: it opens the connections and hands them to the factory.
  let subscriber: RedisClient;
  let om: RedisConnection;
  let identity: Identity;

  /** A key of tenant acme written through the production constructor and create script. */
  async function seed(permissions: Permission[], opts: { revoked?: boolean } = {}) {
    const now = clock.now();
    const { rawKey, record } = issueKey({
      id: randomUUID(),
      tenant: 'acme',
      name: 'seeded',
      permissions,
      createdBy: 'test-seed',
      createdAt: now,
      expiresAt: expiryFor(now, config.keyLifetimeDays),
      revokedAt: opts.revoked ? now : null,
    });
    expect((await new KeyWriter(redis, prefix).create(record, { limit: 0, deadlineMs: 0 })).outcome).toBe('created');
    return { id: record.id, rawKey };
  }

  beforeAll(async () => {
    subscriber = testRedisClient({ maxRetriesPerRequest: null });
    om = await openOmConnection(testRedisDeployment(), () => undefined);
    const connections = { redis, om, subscriber, bull: subscriber };
    identity = await createIdentity({
      config,
      logger: createLogger({ level: 'silent', name: 't' }),
      clock,
      connections,
    });
  });
  afterAll(async () => {
    await identity.close();
    // The factory closed only what it created: the connections are still open, and are ours to close.
    expect(subscriber.status).toBe('ready');
    expect(await redis.ping()).toBe('PONG');
    await closeOmConnection(om);
    await subscriber.quit();
    await cleanup();
  });

  it('maps every key failure to the REST error codes', async () => {
    const revoked = await seed(['Issuer_Admin'], { revoked: true });
    const user = await seed(['Issuer_User']);
    await expect(authorize(identity.authenticator, undefined)).rejects.toMatchObject({
      errorCode: 'API_KEY_MISSING',
      httpStatus: 401,
    });
    await expect(authorize(identity.authenticator, 'idty_short')).rejects.toMatchObject({
      errorCode: 'API_KEY_INVALID',
      httpStatus: 401,
    });
    await expect(authorize(identity.authenticator, generateRawKey())).rejects.toMatchObject({
      errorCode: 'API_KEY_INVALID',
      httpStatus: 401,
    });
    await expect(authorize(identity.authenticator, revoked.rawKey)).rejects.toMatchObject({
      errorCode: 'API_KEY_REVOKED',
      httpStatus: 401,
    });
    await expect(
      authorize(identity.authenticator, user.rawKey, 'Issuer_Admin', 'Verifier_Admin'),
    ).rejects.toMatchObject({ errorCode: 'PERMISSION_DENIED', httpStatus: 403 });
    await expect(authorize(identity.authenticator, user.rawKey)).resolves.toMatchObject({
      keyId: user.id,
      tenant: 'acme',
      permissions: ['Issuer_User'],
    });
    clock.advance(config.keyLifetimeDays * 86_400_000);
    await expect(authorize(identity.authenticator, user.rawKey)).rejects.toMatchObject({
      errorCode: 'API_KEY_EXPIRED',
      httpStatus: 401,
    });
  });

  it('callerKey returns the caller its own key, masked', async () => {
    const admin = await seed(['Verifier_Admin']);
    const principal = await authorize(identity.authenticator, admin.rawKey, 'Issuer_Admin', 'Verifier_Admin');
    const own = await callerKey(identity.keys, principal);
    expect(own).toMatchObject({
      id: admin.id,
      permissions: ['Verifier_Admin'],
      keyMask: `idty_${'*'.repeat(28)}${admin.rawKey.slice(-4)}`,
    });
    expect(JSON.stringify(own)).not.toContain(admin.rawKey);
    await expect(callerKey(identity.keys, { ...principal, keyId: randomUUID() })).rejects.toMatchObject({
      errorCode: 'API_KEY_NOT_FOUND',
    });
  });
});
