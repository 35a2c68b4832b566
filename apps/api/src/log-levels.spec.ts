import { seedKey } from '@proofline/identity-testing';
import { systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { deleteByPrefix } from '@proofline/shared-redis';
import { captureLogs, rawExchange, uniquePrefix } from '@proofline/shared-testing';
import { createApp } from './app';
import { composeApi } from './compose';
import type { ComposedApi } from './compose';
import { listen } from './server';
import type { RunningServer } from './server';
import { testConfig } from './testing/harness';
import { send } from './testing/rest-client';

/**
 * Log levels match blame: a batch of client mistakes (bad JSON, unknown fields, bad keys, oversize
 * bodies, bad parameters, parser refusals) leaves no `error` line, and each refusal's errorCode is
 * on an info line; an operator alerting on error lines is paged for server faults only.
 */
describe('REST logs: client mistakes are never logged at error', () => {
  const prefix = uniquePrefix('loglevels');
  const { sink, lines } = captureLogs();
  let composed: ComposedApi;
  let running: RunningServer;
  let base: string;

  beforeAll(async () => {
    const logger = createLogger({ level: 'debug', name: 'api', destination: sink });
    composed = await composeApi(testConfig(prefix), logger, systemClock);
    running = await listen(createApp(composed.deps), '127.0.0.1', 0, logger);
    base = `http://127.0.0.1:${running.port}`;
  });
  afterAll(async () => {
    await running.close(0);
    await deleteByPrefix(composed.deps.redis, prefix);
    await composed.close();
  });

  it('a batch of bad requests: 4xx problem+json, no error line, every errorCode at info', async () => {
    const admin = await seedKey(composed.deps.redis, { prefix, lifetimeDays: 30 }, { permissions: ['Issuer_Admin'] });
    const key = admin.rawKey;
    const KEYS = '/api/v1/auth/identity-api-keys';
    const answers = await Promise.all([
      send(base, 'POST', KEYS, { key, body: '{"name": "x"', contentType: 'application/json' }), // bad JSON
      send(base, 'POST', KEYS, { key, body: { name: 'k', permissions: ['Issuer_User'], bogus: 1 } }), // unknown field
      send(base, 'POST', KEYS, { key, body: { permissions: 'all' } }),
      send(base, 'POST', KEYS, { key, body: 'x=1', contentType: 'application/x-www-form-urlencoded' }),
      send(base, 'GET', '/api/v1/records/not-a-txid/status', { key }),
      send(base, 'GET', `/api/v1/records/${'ab'.repeat(32)}/status`, { key }),
      send(base, 'GET', '/api/v1/records/%ZZ/status', { key }),
      send(base, 'GET', `/api/v1/records/${'ab'.repeat(32)}/status`, { key: 'idty_wrong' }),
      send(base, 'GET', `/api/v1/records/${'ab'.repeat(32)}/status`),
      send(base, 'POST', '/api/v1/records', { key, body: 'x', contentType: 'text/plain' }),
      send(base, 'POST', '/api/v1/records', { key, body: new Uint8Array(0), contentType: 'application/octet-stream' }),
      send(base, 'GET', '/api/v1/records?encode=bogus', { key }),
      send(base, 'GET', '/no/such/route'),
      send(base, 'PROPFIND', '/api/v1/records', { key }),
    ]);
    for (const res of answers) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      await res.text();
    }
    const big = Buffer.alloc(5 * 1024 * 1024, 0x61);
    const oversize = await rawExchange(
      running.port,
      `POST /api/v1/records HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${big.length}\r\n\r\n`,
      big,
    );
    expect(oversize.status).toBe(413);
    expect((await rawExchange(running.port, 'GARBAGE\r\n\r\n')).status).toBe(400);
    expect((await rawExchange(running.port, 'GET /liveness HTTP/1.1\r\n\r\n')).status).toBe(400);
    expect((await rawExchange(running.port, 'GET /liveness HTTP/1.1\r\nHost: x\r\nExpect: nope\r\n\r\n')).status).toBe(
      417,
    );
    await new Promise((r) => setTimeout(r, 50)); // the last access lines are logged on 'finish'

    expect(lines.filter((l) => l['level'] === 'error' || l['level'] === 'fatal')).toEqual([]);
    const coded = lines.filter((l) => typeof l['errorCode'] === 'string');
    expect(coded.every((l) => l['level'] === 'info' || l['level'] === 'debug')).toBe(true);
    // every refused request's access line names its errorCode
    const refused = lines.filter((l) => l['msg'] === 'request' && Number(l['status']) >= 400);
    expect(refused.length).toBeGreaterThanOrEqual(answers.length + 1);
    expect(refused.filter((l) => typeof l['errorCode'] !== 'string')).toEqual([]);
  });
});
