import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@proofline/shared-logger';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { httpHandler } from './http';

describe('GraphQL process HTTP entry', () => {
  const { redis, cleanup } = testRedis(uniquePrefix('gqlhttp'));
  const servers: http.Server[] = [];
  const serve = async (r: { ping(): Promise<string> }) => {
    const handler = httpHandler({
      redis: r,
      yoga: (_req, res) => res.writeHead(418).end('yoga'),
      logger: createLogger({ level: 'silent', name: 'test' }),
      corsOrigins: [],
      maxBodyBytes: 1024,
    });
    const server = http.createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    await cleanup();
  });

  it('answers liveness and readiness itself and hands everything else to yoga', async () => {
    const base = await serve(redis);
    expect(await (await fetch(`${base}/liveness`)).text()).toBe('Healthy');
    const ready = await fetch(`${base}/readiness`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { redis: 'up' } });
    expect((await fetch(`${base}/graphql`)).status).toBe(418);
    expect((await fetch(`${base}/graphql`, { method: 'POST', body: 'x' })).status).toBe(418);
  });

  it('is not ready when Redis does not answer', async () => {
    const base = await serve({ ping: () => Promise.reject(new Error('down')) });
    const res = await fetch(`${base}/readiness`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'not-ready', checks: { redis: 'down' } });
  });
});
