import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fixture received. */
export interface FixtureRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** How the fixture answers: a status with a JSON (object) or raw (string) body, or no answer at all. */
export type FixtureReply =
  { readonly status: number; readonly headers?: Record<string, string>; readonly body?: unknown } | 'hang';

export type FixtureHandler = (req: FixtureRequest) => FixtureReply | Promise<FixtureReply>;

export interface ProtocolFixture {
  readonly url: string;
  readonly requests: FixtureRequest[];
  handle(handler: FixtureHandler): void;
  close(): Promise<void>;
}

/**
 * A loopback HTTP server on port 0 answering whatever the test scripts: a protocol fixture for
 * ARC's and the headers service's edge cases (5xx, 429, timeouts, malformed bodies, 404 with and
 * without problem JSON, batch answers out of order). Tests only; not a fake ARC.
 */
export async function startProtocolFixture(
  initial: FixtureHandler = () => ({ status: 500 }),
): Promise<ProtocolFixture> {
  let handler = initial;
  const requests: FixtureRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: FixtureRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      void Promise.resolve(handler(request)).then((reply) => {
        if (reply === 'hang') return;
        const isText = typeof reply.body === 'string';
        const body = reply.body === undefined ? '' : isText ? (reply.body as string) : JSON.stringify(reply.body);
        res.writeHead(reply.status, { 'Content-Type': isText ? 'text/plain' : 'application/json', ...reply.headers });
        res.end(body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle: (h) => {
      handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
