import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request a loopback server received, its body read whole. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request received, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** Drops open connections (a hanging answer included) and stops listening. */
  close(): Promise<void>;
}

/**
 * An HTTP server on 127.0.0.1, port 0, for the servers a spec plays (a protocol fixture, a proxy
 * in front of the devnet node): each request is read whole, recorded, then handed to `respond`
 * with the response to write (or to leave unanswered).
 */
export async function startLoopbackServer(
  respond: (req: ReceivedRequest, res: http.ServerResponse) => void,
): Promise<LoopbackServer> {
  const requests: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      respond(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
