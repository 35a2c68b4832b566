import net from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '@proofline/shared-logger';
import { eventually, expectProblemAnswer, expectProtocolRefusals, rawExchange } from '@proofline/shared-testing';
import { startGraphQLServer } from './server';
import type { RunningGraphQL } from './server';
import { startGraphQL } from './testing/fixture';
import type { GraphQLFixture } from './testing/fixture';

/** Sends raw bytes and reads the whole answer until the server closes the connection. */
function raw(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(bytes);
  });
}

const ORIGIN = 'https://app.example';

describe('GraphQL edge: request ids, access log, CORS, body limit, metrics, parser refusals', () => {
  let fx: GraphQLFixture;
  let running: RunningGraphQL;
  let base: string;
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  beforeAll(async () => {
    fx = await startGraphQL({
      HOST: '127.0.0.1',
      CORS_ORIGINS: `${ORIGIN},http://localhost:5173`,
      GRAPHQL_MAX_BODY_BYTES: '2048',
    });
    const logger = createLogger({ level: 'info', name: 'test-graphql', destination: sink });
    running = await startGraphQLServer(fx.deps, fx.config, logger, 0);
    base = `http://127.0.0.1:${running.port}`;
  });
  afterAll(async () => {
    await running.close(0);
    await fx.close();
  });
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('echoes a well-formed x-request-id, replaces a malformed one, and logs one access line per request', async () => {
    const echoed = await post({ query: '{ health }' }, { 'x-request-id': 'abc-123.X_y' });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123.X_y');
    expect(await echoed.json()).toEqual({ data: { health: 'ok' } });
    const replaced = await post({ query: '{ health }' }, { 'x-request-id': 'bad id with spaces' });
    const generated = replaced.headers.get('x-request-id') ?? '';
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    const mine = (l: Record<string, unknown>) =>
      l['msg'] === 'request' && (l['reqId'] === 'abc-123.X_y' || l['reqId'] === generated);
    await eventually(async () => lines.filter(mine).length >= 2);
    expect(lines.filter(mine)).toHaveLength(2);
    const line = lines.find((l) => l['reqId'] === 'abc-123.X_y');
    expect(line).toMatchObject({ method: 'POST', path: '/graphql', status: 200 });
    expect(typeof line?.['ms']).toBe('number');
  });

  it('CORS: a listed origin is echoed without credentials, an unlisted one gets no CORS headers', async () => {
    const listed = await post({ query: '{ health }' }, { origin: ORIGIN });
    expect(listed.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(listed.headers.get('access-control-allow-credentials')).toBeNull();
    expect(listed.headers.get('vary')).toMatch(/origin/i);
    const other = await post({ query: '{ health }' }, { origin: 'https://evil.example' });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-allow-credentials')).toBeNull();

    const preflight = await fetch(`${base}/graphql`, {
      method: 'OPTIONS',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-api-key',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-api-key');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const refused = await fetch(`${base}/graphql`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(refused.status).toBe(204);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('CORS is off when CORS_ORIGINS is empty (the default): no origin is ever reflected', async () => {
    const plain = await startGraphQLServer(
      fx.deps,
      { ...fx.config, corsOrigins: [] },
      createLogger({ level: 'silent', name: 't' }),
      0,
    );
    try {
      const res = await fetch(`http://127.0.0.1:${plain.port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: ORIGIN },
        body: '{"query":"{ health }"}',
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    } finally {
      await plain.close(0);
    }
  });

  it('a body over GRAPHQL_MAX_BODY_BYTES is 413 CONTENT_LENGTH_LIMIT_EXCEEDED, declared or chunked', async () => {
    const big = { query: `{ health } # ${'x'.repeat(4096)}` };
    const declared = await post(big);
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({
      errors: [{ extensions: { code: 'CONTENT_LENGTH_LIMIT_EXCEEDED', status: 413 } }],
    });
    const chunked = await rawExchange(
      running.port,
      `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n${'y'.repeat(4096)}\r\n0\r\n\r\n`,
    );
    expect(chunked.status).toBe(413);
    expect(chunked.body).toContain('CONTENT_LENGTH_LIMIT_EXCEEDED');
    // just under the limit still runs
    const under = await post({ query: `{ health } # ${'x'.repeat(1900)}` });
    expect(under.status).toBe(200);
  });

  it('a 5 MiB body always gets its 413 problem+json (with the GraphQL errors array), never a reset', async () => {
    const body = Buffer.alloc(5 * 1024 * 1024, 0x61);
    const head = `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    for (let i = 0; i < 5; i++) {
      const answer = await rawExchange(running.port, head, body);
      expectProblemAnswer(answer, 413, 'CONTENT_LENGTH_LIMIT_EXCEEDED');
      expect(JSON.parse(answer.body)).toMatchObject({
        errors: [{ extensions: { code: 'CONTENT_LENGTH_LIMIT_EXCEEDED' } }],
      });
    }
    // chunked, so the limit is only found while reading
    const chunk = Buffer.from(`100000\r\n${'b'.repeat(0x100000)}\r\n`);
    const chunked = Buffer.concat([...Array.from({ length: 5 }, () => chunk), Buffer.from('0\r\n\r\n')]);
    for (let i = 0; i < 3; i++) {
      const answer = await rawExchange(
        running.port,
        'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
        chunked,
      );
      expectProblemAnswer(answer, 413, 'CONTENT_LENGTH_LIMIT_EXCEEDED');
    }
  });

  it('answers what Node would refuse with a bare status line: no Host, a bad Expect, CONNECT', async () => {
    await expectProtocolRefusals(running.port, '/graphql');
    const refusals = lines.filter((l) => typeof l['errorCode'] === 'string');
    expect(refusals.length).toBeGreaterThan(0);
    expect(lines.some((l) => l['level'] === 'error')).toBe(false);
  });

  it('serves Prometheus /metrics: requests by operation type and status, latency, process metrics', async () => {
    await post({ query: 'query Q { health }' });
    await post({ query: '{' });
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toMatch(
      /proofline_graphql_requests_total\{endpoint="\/graphql",operation="query",status="200",app="proofline-graphql"\} \d+/,
    );
    expect(text).toMatch(
      /proofline_graphql_requests_total\{endpoint="\/graphql",operation="none",status="200",app="proofline-graphql"\} \d+/,
    );
    expect(text).toMatch(
      /proofline_graphql_request_duration_seconds_bucket\{le="0.005",app="proofline-graphql",endpoint="\/graphql",operation="query"\} \d+/,
    );
    expect(text).toContain('proofline_process_cpu_seconds_total');
    expect(text).toContain('proofline_nodejs_eventloop_lag_seconds');
  });

  it('with GRAPHQL_METRICS_PORT, /metrics is served on the internal listener only', async () => {
    const internal = await startGraphQLServer(
      fx.deps,
      { ...fx.config, metrics: { host: '127.0.0.1', apiPort: undefined, graphqlPort: 0 } },
      createLogger({ level: 'silent', name: 't' }),
      0,
    );
    try {
      await fetch(`http://127.0.0.1:${internal.port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ health }"}',
      });
      const publicAnswer = await fetch(`http://127.0.0.1:${internal.port}/metrics`);
      expect(publicAnswer.status).toBe(404);
      expect(await publicAnswer.text()).not.toContain('proofline_graphql_requests_total');
      const port = internal.metricsListener?.port ?? -1;
      expect(port).not.toBe(internal.port);
      const scraped = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toMatch(
        /proofline_graphql_requests_total\{endpoint="\/graphql",operation="query",status="200"/,
      );
      expect((await fetch(`http://127.0.0.1:${port}/graphql`)).status).toBe(404);
    } finally {
      await internal.close(0);
    }
  });

  it('requests the HTTP parser refuses get problem+json with an errorCode and an x-request-id', async () => {
    const badLine = await raw(running.port, 'GARBAGE\r\n\r\n');
    expect(badLine).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(badLine).toMatch(/content-type: application\/problem\+json/i);
    expect(badLine).toMatch(/x-request-id: [0-9a-f-]{36}/i);
    expect(JSON.parse(badLine.slice(badLine.indexOf('\r\n\r\n') + 4))).toMatchObject({
      status: 400,
      errorCode: 'BAD_REQUEST',
    });

    const huge = await raw(running.port, `GET /graphql HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4))).toMatchObject({
      status: 431,
      errorCode: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
    });
  });
});
