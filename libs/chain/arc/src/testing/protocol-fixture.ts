import { startLoopbackServer } from '@proofline/shared-testing';
import type { ReceivedRequest } from '@proofline/shared-testing';

/** A request the fixture received. */
export type FixtureRequest = ReceivedRequest;

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
  const server = await startLoopbackServer((request, res) => {
    void Promise.resolve(handler(request)).then((reply) => {
      if (reply === 'hang') return;
      const isText = typeof reply.body === 'string';
      const body = reply.body === undefined ? '' : isText ? (reply.body as string) : JSON.stringify(reply.body);
      res.writeHead(reply.status, { 'Content-Type': isText ? 'text/plain' : 'application/json', ...reply.headers });
      res.end(body);
    });
  });
  return {
    ...server,
    handle: (h) => {
      handler = h;
    },
  };
}
