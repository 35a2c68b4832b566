import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLifecycle } from './lifecycle';

/** The outer listener of a REST process: starting (before Redis), serving, draining (SIGTERM). */
describe('lifecycle listener', () => {
  const lifecycle = createLifecycle();
  const server = http.createServer(lifecycle.listener);
  let base: string;

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('starting: liveness 200, readiness 503, every other request 503 REDIS_UNAVAILABLE problem+json with Retry-After and a request id', async () => {
    expect(lifecycle.phase).toBe('starting');
    const live = await fetch(`${base}/liveness`);
    expect([live.status, await live.text()]).toEqual([200, 'Healthy']);
    const ready = await fetch(`${base}/readiness`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'not-ready', checks: { redis: 'down', draining: false } });
    const write = await fetch(`${base}/api/v1/records`, {
      method: 'POST',
      body: 'x',
      headers: { 'x-request-id': 'req-1' },
    });
    expect(write.status).toBe(503);
    expect(write.headers.get('content-type')).toBe('application/problem+json');
    expect(write.headers.get('retry-after')).toBe('1');
    expect(write.headers.get('x-request-id')).toBe('req-1');
    expect(await write.json()).toMatchObject({
      status: 503,
      errorCode: 'REDIS_UNAVAILABLE',
      instance: '/api/v1/records',
    });
  });

  it('serving: everything goes to the app; draining: readiness 503 at once, other requests still served', async () => {
    lifecycle.serve((req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`app ${req.url ?? ''}`));
    expect(await (await fetch(`${base}/readiness`)).text()).toBe('app /readiness');
    expect(await (await fetch(`${base}/liveness`)).text()).toBe('app /liveness');

    lifecycle.drain();
    const ready = await fetch(`${base}/readiness`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'not-ready', checks: { draining: true } });
    const other = await fetch(`${base}/api/v1/records/abc/status`);
    expect([other.status, await other.text()]).toEqual([200, 'app /api/v1/records/abc/status']);
    expect(await (await fetch(`${base}/liveness`)).text()).toBe('app /liveness');
  });
});
