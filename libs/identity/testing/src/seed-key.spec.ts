import { createHash } from 'node:crypto';
import { keysMatching, testRedis, uniquePrefix } from '@proofline/shared-testing';
import { seedKey } from './seed-key';

describe('seedKey (test helper)', () => {
  const prefix = uniquePrefix('seed');
  const { redis, cleanup } = testRedis(prefix);
  afterAll(cleanup);

  it('stores a key through the production write script: hash only, expiry from the lifetime, revocation on request', async () => {
    const createdAt = new Date('2026-01-01T00:00:00Z');
    const active = await seedKey(
      redis,
      { prefix, lifetimeDays: 60 },
      { tenant: 'acme', permissions: ['Verifier_User', 'Issuer_Admin'], createdAt },
    );
    const revoked = await seedKey(
      redis,
      { prefix, lifetimeDays: 60 },
      { permissions: ['Issuer_User'], createdAt, revoked: true },
    );
    expect(active.rawKey).toMatch(/^idty_[A-Za-z0-9]{32}$/);
    expect(active.permissions).toEqual(['Issuer_Admin', 'Verifier_User']);

    const keys = await keysMatching(redis, `${prefix}:*`);
    const stored = (await Promise.all(keys.filter((k) => k.includes(':key:')).map((k) => redis.hgetall(k)))) as Record<
      string,
      string
    >[];
    const mine = stored.find((h) => h['keyHash'] === createHash('sha256').update(active.rawKey).digest('hex'));
    expect(mine).toBeDefined();
    expect(JSON.stringify(stored)).not.toContain(active.rawKey);
    expect(
      stored.find((h) => h['keyHash'] === createHash('sha256').update(revoked.rawKey).digest('hex')),
    ).toBeDefined();
    expect(JSON.stringify(mine)).toContain('acme');
    expect(Object.values(mine ?? {}).join(' ')).toMatch(/2026-03-02|1772409600/);
  });
});
