import http from 'node:http';
import type { Express } from 'express';
import type { Logger } from '@proofline/shared-logger';

export interface RunningServer {
  readonly server: http.Server;
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes the rest. */
  close(graceMs?: number): Promise<void>;
}

/** Listens on host:port (port 0 picks a free one) with sane timeouts. */
export async function listen(app: Express, host: string, port: number, logger: Logger): Promise<RunningServer> {
  const server = http.createServer(app);
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  logger.info({ host, port: actual }, 'listening');
  return {
    server,
    port: actual,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
