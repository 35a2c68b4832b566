import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { ClaimsService, mintToken } from '@proofline/identity-claims';
import { ManualClock, loadConfig } from '@proofline/shared-config';
import type { Config } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { sharedKeys } from '@proofline/shared-redis';
import { testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { createApp } from './app';
import { send } from './testing/rest-client';

const SECRET = 'a-test-secret-that-is-long-enough-0123456789';

describe('GET /auth/granted-claims', () => {
  const prefix = uniquePrefix('claims');
  const { redis, cleanup } = testRedis(prefix);
  const clock = new ManualClock('2026-11-22T12:00:00Z');
  const servers: http.Server[] = [];

  async function serve(env: Record<string, string>): Promise<{ base: string; config: Config }> {
    const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, ...env });
    const claims = new ClaimsService({ config, redis, clock });
    const app = createApp({ config, logger: createLogger({ level: 'silent', name: 't' }), redis, clock, claims });
    const server = http.createServer(app);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, config };
  }

  const get = (base: string, authorization?: string, path = '/auth/granted-claims') =>
    send(base, 'GET', path, { headers: authorization ? { authorization } : {} });

  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    await cleanup();
  });

  describe('with a shared secret (HS256)', () => {
    let base: string;
    let config: Config;
    beforeAll(async () => ({ base, config } = await serve({ AUTH_JWT_SECRET: SECRET })));

    it('returns the claims of a valid token, on both paths', async () => {
      const token = await mintToken({ config, redis, clock }, { claims: ['issuer', 'verifier'] });
      for (const path of ['/auth/granted-claims', '/api/v1/auth/granted-claims']) {
        const res = await get(base, `Bearer ${token}`, path);
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ grantedClaims: ['issuer', 'verifier'] });
      }
    });

    it('answers no credentials with an empty claim list', async () => {
      const res = await get(base);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ grantedClaims: [] });
    });

    it.each([
      ['garbage', 'Bearer not-a-jwt'],
      ['wrong scheme', 'Basic dXNlcjpwYXNz'],
      ['bare token without scheme', 'eyJhbGciOiJIUzI1NiJ9.e30.sig'],
      [
        'alg none',
        `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"cognito:groups":["x"]}').toString('base64url')}.`,
      ],
    ])('refuses %s with 401 problem+json', async (_label, header) => {
      const res = await get(base, header);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(await res.json()).toMatchObject({
        status: 401,
        errorCode: 'INVALID_AUTHENTICATION_CREDENTIALS',
        detail: 'invalid authentication credentials',
      });
    });

    it('refuses a token signed with another secret', async () => {
      const other = loadConfig({ AUTH_JWT_SECRET: 'another-secret-that-is-long-enough-987654321' });
      const token = await mintToken({ config: other, redis, clock }, { claims: ['a'] });
      expect((await get(base, `Bearer ${token}`)).status).toBe(401);
    });

    it('refuses an expired token (injected clock, no waiting)', async () => {
      const token = await mintToken({ config, redis, clock }, { claims: ['a'], ttlSeconds: 60 });
      expect((await get(base, `Bearer ${token}`)).status).toBe(200);
      clock.advance(61_000 + 5_000);
      expect((await get(base, `Bearer ${token}`)).status).toBe(401);
      clock.set('2026-11-22T12:00:00Z');
    });
  });

  it('checks issuer and audience when configured', async () => {
    const { base, config } = await serve({
      AUTH_JWT_SECRET: SECRET,
      AUTH_JWT_ISSUER: 'https://idp.example',
      AUTH_JWT_AUDIENCE: 'proofline',
    });
    const good = await mintToken({ config, redis, clock }, { claims: ['x'] });
    expect(await (await get(base, `Bearer ${good}`)).json()).toEqual({ grantedClaims: ['x'] });
    const plain = loadConfig({ AUTH_JWT_SECRET: SECRET });
    const noIssuer = await mintToken({ config: plain, redis, clock }, { claims: ['x'] });
    expect((await get(base, `Bearer ${noIssuer}`)).status).toBe(401);
  });

  it('works with zero configuration through a generated development secret shared with the CLI', async () => {
    const { base, config } = await serve({});
    const token = await mintToken({ config, redis, clock }, { claims: ['dev'] });
    const res = await get(base, `Bearer ${token}`);
    expect(await res.json()).toEqual({ grantedClaims: ['dev'] });
    const stored = await redis.get(sharedKeys(prefix).devJwtSecret);
    expect(stored).toMatch(/^[A-Za-z0-9_-]{64}$/);
  });

  it('verifies RS256 tokens against a JWKS endpoint', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    const jwks = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    servers.push(jwks);
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    const { base } = await serve({
      AUTH_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
    });
    const now = Math.floor(clock.now().getTime() / 1000);
    const token = await new SignJWT({ 'cognito:groups': ['Verifier'] })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(privateKey);
    const res = await get(base, `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ grantedClaims: ['Verifier'] });
    const hs = await mintToken({ config: loadConfig({ AUTH_JWT_SECRET: SECRET }), redis, clock }, { claims: ['x'] });
    expect((await get(base, `Bearer ${hs}`)).status).toBe(401);
  });
});
