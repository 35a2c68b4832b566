import net from 'node:net';
import { systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { deleteByPrefix } from '@proofline/shared-redis';
import { seedKey } from '@proofline/identity-testing';
import { expectProblemAnswer, expectProtocolRefusals, rawExchange, uniquePrefix } from '@proofline/shared-testing';
import { createApp } from './app';
import { composeApi } from './compose';
import type { ComposedApi } from './compose';
import { listen } from './server';
import type { RunningServer } from './server';
import { testConfig } from './testing/harness';

/** Sends raw bytes and reads the whole answer until the server closes the connection. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(bytes);
  });
}

const problemOf = (answer: string): unknown => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
const ORIGIN = 'https://console.example';
const logger = createLogger({ level: 'silent', name: 't' });

describe('REST edge (production composition): parser refusals, CORS, METRICS_PORT', () => {
  const prefix = uniquePrefix('restedge');
  let composed: ComposedApi;
  let running: RunningServer;
  let base: string;

  beforeAll(async () => {
    composed = await composeApi(testConfig(prefix, { CORS_ORIGINS: ORIGIN, METRICS_PORT: '9' }), logger, systemClock);
    // METRICS_PORT set: the public app has no /metrics; the internal listener (port 0 here) has.
    running = await listen(createApp(composed.deps), '127.0.0.1', 0, logger, {
      metrics: { source: composed.deps.metrics.registry, host: '127.0.0.1', port: 0 },
    });
    base = `http://127.0.0.1:${running.port}`;
  });
  afterAll(async () => {
    await running.close(0);
    await deleteByPrefix(composed.deps.redis, prefix);
    await composed.close();
  });

  it('answers requests the HTTP parser refuses with problem+json, an errorCode and an x-request-id', async () => {
    const badLine = await raw(running.port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(badLine).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(badLine).toMatch(/content-type: application\/problem\+json/i);
    expect(badLine).toMatch(/x-request-id: [0-9a-f-]{36}/i);
    expect(problemOf(badLine)).toMatchObject({ status: 400, errorCode: 'BAD_REQUEST' });

    const huge = await raw(running.port, `GET /liveness HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(problemOf(huge)).toMatchObject({ status: 431, errorCode: 'REQUEST_HEADER_FIELDS_TOO_LARGE' });

    const badHeader = await raw(running.port, 'GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n');
    expect(problemOf(badHeader)).toMatchObject({ status: 400, errorCode: 'BAD_REQUEST' });
    // the server still serves afterwards
    expect((await fetch(`${base}/liveness`)).status).toBe(200);
  });

  it('answers what Node would refuse with a bare status line: no Host, a bad Expect, CONNECT', async () => {
    await expectProtocolRefusals(running.port, '/api/v1/records');
  });

  it('a 5 MiB record always gets its 413 problem+json, never a reset (refused by Content-Length, before it is read)', async () => {
    const key = await seedKey(
      composed.deps.redis,
      { prefix, lifetimeDays: 30 },
      {
        permissions: ['Issuer_Admin'],
        createdAt: new Date(),
      },
    );
    const body = Buffer.alloc(5 * 1024 * 1024, 0x61);
    const head =
      `POST /api/v1/records HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key.rawKey}\r\n` +
      `Content-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n\r\n`;
    for (let i = 0; i < 5; i++)
      expectProblemAnswer(await rawExchange(running.port, head, body), 413, 'CONTENT_LENGTH_LIMIT_EXCEEDED');
    // unauthenticated: the 401 arrives the same way
    const anonymous = head.replace(/X-Api-Key: [^\r]+\r\n/, '');
    for (let i = 0; i < 3; i++)
      expectProblemAnswer(await rawExchange(running.port, anonymous, body), 401, 'API_KEY_MISSING');
  });

  it('CORS: only CORS_ORIGINS are echoed, never with credentials; preflights end at the edge', async () => {
    const listed = await fetch(`${base}/liveness`, { headers: { origin: ORIGIN } });
    expect(listed.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(listed.headers.get('access-control-expose-headers')).toContain('x-request-id');
    expect(listed.headers.get('access-control-allow-credentials')).toBeNull();
    const other = await fetch(`${base}/liveness`, { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${base}/api/v1/records`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-api-key');
  });

  it('CORS is off by default: an Origin is never reflected', async () => {
    const plain = await listen(createApp({ ...composed.deps, config: testConfig(prefix) }), '127.0.0.1', 0, logger);
    try {
      const res = await fetch(`http://127.0.0.1:${plain.port}/liveness`, { headers: { origin: ORIGIN } });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    } finally {
      await plain.close(0);
    }
  });

  it('with METRICS_PORT, /metrics is served on the internal listener only', async () => {
    await fetch(`${base}/liveness`);
    const publicAnswer = await fetch(`${base}/metrics`);
    expect(publicAnswer.status).toBe(404);
    expect(publicAnswer.headers.get('content-type')).toContain('application/problem+json');
    const port = running.metrics?.port ?? -1;
    expect(port).not.toBe(running.port);
    const scraped = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(
      /proofline_http_requests_total\{method="GET",route="\/liveness",status="200",app="proofline-api"\} \d+/,
    );
    const elsewhere = await fetch(`http://127.0.0.1:${port}/liveness`);
    expect(elsewhere.status).toBe(404);
  });

  it('a second listener on a taken metrics port fails at start (EADDRINUSE), it does not share figures', async () => {
    const taken = running.metrics?.port ?? -1;
    await expect(
      listen(createApp(composed.deps), '127.0.0.1', 0, logger, {
        metrics: { source: composed.deps.metrics.registry, host: '127.0.0.1', port: taken },
      }),
    ).rejects.toMatchObject({
      code: 'EADDRINUSE',
    });
  });
});
