import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { ClaimsService } from '@proofline/identity-claims';
import { loadConfig, systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { startHeartbeat } from '@proofline/shared-redis';
import { testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { createApp } from './app';

describe('health endpoints', () => {
  const prefix = uniquePrefix('health');
  const { redis, cleanup } = testRedis(prefix);
  const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const claims = new ClaimsService({ config, redis, clock: systemClock });
  const app = createApp({
    config,
    logger: createLogger({ level: 'silent', name: 'test' }),
    redis,
    clock: systemClock,
    claims,
  });
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await cleanup();
  });

  it('liveness answers Healthy', async () => {
    const res = await fetch(`${base}/liveness`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('Healthy');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('readiness describes this instance: 200 with Redis up even without a live worker; workers are reported', async () => {
    const before = await fetch(`${base}/readiness`);
    expect(before.status).toBe(200);
    expect(await before.json()).toMatchObject({
      status: 'ready',
      appVersion: '0.1.0',
      checks: { redis: 'up', workers: 0, draining: false },
    });

    const stop = startHeartbeat(redis, prefix, 'worker-test');
    await waitFor(
      async () =>
        ((await (await fetch(`${base}/readiness`)).json()) as { checks: { workers: number } }).checks.workers === 1,
    );
    const after = await fetch(`${base}/readiness`);
    expect(after.status).toBe(200);
    expect(await after.json()).toMatchObject({ status: 'ready', checks: { redis: 'up', workers: 1 } });
    await stop();
  });

  it('unknown routes get a problem+json 404 and echo a well-formed request id', async () => {
    const res = await fetch(`${base}/nope`, { headers: { 'x-request-id': 'abc-123' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    expect(await res.json()).toMatchObject({ status: 404, errorCode: 'ROUTE_NOT_FOUND' });
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
