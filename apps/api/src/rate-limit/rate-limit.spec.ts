import { deleteByPrefix } from '@proofline/shared-redis';
import { keysMatching, uniquePrefix } from '@proofline/shared-testing';
import { seedKey, send, startApi } from '../testing/harness';
import type { RunningApi } from '../testing/harness';
import { rateLimitKeys } from './keys';

const USAGE = '/api/v1/auth/identity-api-keys/usage';

/** Fires `n` requests at once, alternating between the instances; returns the responses. */
async function burst(apis: readonly RunningApi[], keys: readonly string[], n: number): Promise<Response[]> {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      send(apis[i % apis.length] as RunningApi, 'GET', USAGE, { key: keys[i % keys.length] as string }),
    ),
  );
}

/**
 * Rate limits over two real API instances sharing one Redis (one prefix): the limit holds in sum
 * across processes, refusals are 429 problem+json with Retry-After and the IETF RateLimit fields.
 */
describe('rate limits across API instances', () => {
  describe('per key (RATE_LIMIT_PER_KEY=1/8)', () => {
    const prefix = uniquePrefix('rl');
    let a: RunningApi;
    let b: RunningApi;
    beforeAll(async () => {
      const env = { RATE_LIMIT_PER_KEY: '1/8' };
      a = await startApi({ prefix, env });
      b = await startApi({ prefix, env });
    });
    afterAll(async () => {
      await b.close();
      await deleteByPrefix(a.deps.redis, prefix);
      await a.close();
    });

    it('admits the burst in sum over both instances, then 429 RATE_LIMITED with Retry-After and RateLimit headers', async () => {
      const key = await seedKey(a, { tenant: 'rl-a', permissions: ['Issuer_Admin'] });
      const started = Date.now();
      const answers = await burst([a, b], [key.rawKey], 24);
      const elapsedS = (Date.now() - started) / 1000;
      const admitted = answers.filter((r) => r.status === 200);
      const refused = answers.filter((r) => r.status === 429);
      expect(admitted.length + refused.length).toBe(24);
      // 8 at once, plus at most one more per second that passed while the burst ran
      expect(admitted.length).toBeGreaterThanOrEqual(8);
      expect(admitted.length).toBeLessThanOrEqual(8 + Math.ceil(elapsedS));
      // both instances refused some: the bucket is shared, not per process
      expect(new Set(refused.map((r) => new URL(r.url).port)).size).toBe(2);

      const ok = admitted[0] as Response;
      expect(ok.headers.get('ratelimit-policy')).toBe('"per-key";q=8;w=8');
      expect(ok.headers.get('ratelimit')).toMatch(/^"per-key";r=\d;t=\d+$/);
      const no = refused[0] as Response;
      expect(no.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await no.json()).toMatchObject({ status: 429, errorCode: 'RATE_LIMITED' });
      expect(Number(no.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(no.headers.get('ratelimit-policy')).toBe('"per-key";q=8;w=8');
      expect(no.headers.get('ratelimit')).toMatch(/^"per-key";r=0;t=\d+$/);

      // another key of the same tenant has its own bucket
      const other = await seedKey(b, { tenant: 'rl-a', permissions: ['Issuer_Admin'] });
      expect((await send(b, 'GET', USAGE, { key: other.rawKey })).status).toBe(200);
      // the bucket refills at the configured rate: after Retry-After the key is admitted again
      await new Promise((r) => setTimeout(r, Number(no.headers.get('retry-after')) * 1000));
      expect((await send(a, 'GET', USAGE, { key: key.rawKey })).status).toBe(200);
      // the stored bucket expires once full again (no key lives for ever)
      const pttl = await a.deps.redis.pttl(rateLimitKeys(prefix).key('rl-a', key.id));
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(8001);
    }, 30_000);

    it('failed authentication is not admitted or counted (401 before the limiter)', async () => {
      const res = await send(a, 'GET', USAGE, { key: 'idty_' + 'x'.repeat(32) });
      expect(res.status).toBe(401);
      expect(res.headers.get('ratelimit')).toBeNull();
    });
  });

  describe('per tenant (RATE_LIMIT_PER_TENANT=1/6) with several keys', () => {
    const prefix = uniquePrefix('rlt');
    let a: RunningApi;
    let b: RunningApi;
    beforeAll(async () => {
      const env = { RATE_LIMIT_PER_TENANT: '1/6', RATE_LIMIT_PER_KEY: '100/100' };
      a = await startApi({ prefix, env });
      b = await startApi({ prefix, env });
    });
    afterAll(async () => {
      await b.close();
      await deleteByPrefix(a.deps.redis, prefix);
      await a.close();
    });

    it('the tenant limit holds in sum over its keys and both instances; another tenant is unaffected', async () => {
      const k1 = await seedKey(a, { tenant: 'rl-t', permissions: ['Issuer_Admin'] });
      const k2 = await seedKey(a, { tenant: 'rl-t', permissions: ['Verifier_Admin'] });
      const started = Date.now();
      const answers = await burst([a, b], [k1.rawKey, k2.rawKey], 20);
      const elapsedS = (Date.now() - started) / 1000;
      const admitted = answers.filter((r) => r.status === 200).length;
      expect(admitted).toBeGreaterThanOrEqual(6);
      expect(admitted).toBeLessThanOrEqual(6 + Math.ceil(elapsedS));
      expect(answers.filter((r) => r.status === 429).length).toBe(20 - admitted);
      expect(answers[0]?.headers.get('ratelimit-policy')).toBe('"per-key";q=100;w=1, "per-tenant";q=6;w=6');
      const other = await seedKey(b, { tenant: 'rl-other', permissions: ['Issuer_Admin'] });
      expect((await send(b, 'GET', USAGE, { key: other.rawKey })).status).toBe(200);
    });
  });

  it('no limit configured: no RateLimit headers (and no limiter call)', async () => {
    const prefix = uniquePrefix('rl0');
    const api = await startApi({ prefix });
    try {
      expect(api.deps.identity.authenticator.admission).toBeUndefined();
      const key = await seedKey(api, { tenant: 'rl-0', permissions: ['Issuer_Admin'] });
      const res = await send(api, 'GET', USAGE, { key: key.rawKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toBeNull();
      expect(res.headers.get('ratelimit-policy')).toBeNull();
      expect(await keysMatching(api.deps.redis, `${prefix}:*:ratelimit:*`)).toEqual([]);
    } finally {
      await deleteByPrefix(api.deps.redis, prefix);
      await api.close();
    }
  });
});
