import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@proofline/shared-logger';
import { captureLogs, expectProblemAnswer, rawExchange } from '@proofline/shared-testing';
import { createEdgeServer, discardBody } from './edge';

/** An edge server whose app refuses any body over 1 KiB with 413 before reading it. */
async function serve(): Promise<{ port: number; lines: Record<string, unknown>[]; close(): Promise<void> }> {
  const { sink, lines } = captureLogs();
  const logger = createLogger({ level: 'debug', name: 'spec', destination: sink });
  const server = createEdgeServer((req, res) => {
    if (Number(req.headers['content-length'] ?? 0) > 1024) {
      res
        .writeHead(413, { 'content-type': 'application/problem+json' })
        .end(JSON.stringify({ status: 413, errorCode: 'CONTENT_LENGTH_LIMIT_EXCEEDED' }));
      discardBody(req);
      return;
    }
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  }, logger);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    lines,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('createEdgeServer: protocol refusals as problem+json', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(() => s.close());

  it.each([
    ['a request line that is not HTTP', 'GARBAGE\r\n\r\n'],
    ['an unknown HTTP version', 'GET / HTTP/9.9\r\n\r\n'],
    ['a header name with a space', 'GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'],
    ['a Content-Length that is not a number', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
    [
      'Content-Length with Transfer-Encoding',
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    ['control bytes', '\u0000\u0001\u0002\r\n\r\n'],
    ['an HTTP/1.1 request without Host', 'GET / HTTP/1.1\r\n\r\n'],
  ])('%s: 400 BAD_REQUEST', async (_what, bytes) => {
    expectProblemAnswer(await rawExchange(s.port, bytes), 400, 'BAD_REQUEST');
  });

  it('a refused HEAD request gets the problem headers without a body (a client would read it as the next answer)', async () => {
    const answer = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
      (resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: s.port, method: 'HEAD', path: '/\u00e9' }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        });
        req.on('error', reject);
        req.end();
      },
    );
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body).toBe('');
    // the same refusal to GET has its body
    expectProblemAnswer(await rawExchange(s.port, 'GET /\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n'), 400, 'BAD_REQUEST');
  });

  it('headers over the limit: 431 REQUEST_HEADER_FIELDS_TOO_LARGE', async () => {
    const answer = await rawExchange(s.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectProblemAnswer(answer, 431, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
  });

  it('an Expect other than 100-continue: 417 EXPECTATION_FAILED, the request id echoed', async () => {
    const answer = await rawExchange(
      s.port,
      'GET / HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nX-Request-Id: req-417\r\n\r\n',
    );
    expectProblemAnswer(answer, 417, 'EXPECTATION_FAILED', 'req-417');
  });

  it('Expect: 100-continue still works', async () => {
    const answer = await rawExchange(
      s.port,
      'POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi',
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('ok');
  });

  it('CONNECT: 405 METHOD_NOT_ALLOWED instead of a dropped connection', async () => {
    expectProblemAnswer(
      await rawExchange(s.port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'),
      405,
      'METHOD_NOT_ALLOWED',
    );
  });

  it('a 5 MiB body refused before it is read: the 413 always arrives, never a reset', async () => {
    const body = Buffer.alloc(5 * 1024 * 1024, 0x61);
    for (let i = 0; i < 5; i++) {
      const answer = await rawExchange(
        s.port,
        `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
        body,
      );
      expect(answer.status).toBe(413);
    }
  });

  it('refusals are logged at info with their errorCode, never at error', () => {
    const refusals = s.lines.filter((l) => typeof l['errorCode'] === 'string');
    expect(refusals.length).toBeGreaterThan(5);
    expect(refusals.every((l) => l['level'] === 'info')).toBe(true);
    expect(s.lines.some((l) => l['level'] === 'error' || l['level'] === 'fatal')).toBe(false);
  });
});
