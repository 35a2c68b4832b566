import type http from 'node:http';
import { createEdgeServer, serveMetrics } from '@proofline/shared-http';
import type { MetricsListener, MetricsSource } from '@proofline/shared-http';
import type { Logger } from '@proofline/shared-logger';

export interface RunningServer {
  readonly server: http.Server;
  readonly port: number;
  /** The internal `/metrics` listener, when one was asked for. */
  readonly metrics: MetricsListener | undefined;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes the rest. */
  close(graceMs?: number): Promise<void>;
}

export interface ListenOptions {
  /** Serve these metrics on their own listener (`METRICS_PORT`) instead of the public port. */
  readonly metrics?: { readonly source: MetricsSource; readonly host: string; readonly port: number };
  /**
   * Share the port with the other API processes (SO_REUSEPORT, Node >= 22.12): the kernel spreads
   * new connections over every process listening and stops sending any to one that died.
   */
  readonly reusePort?: boolean;
}

/**
 * Listens on host:port (port 0 picks a free one) with sane timeouts. `app` is the Express app or
 * the process's lifecycle listener (main.ts: it listens before Redis is reachable). Requests Node's HTTP server
 * would refuse with a bare status line (parser errors, no Host, a bad Expect, CONNECT) get a problem+json with an
 * errorCode and an x-request-id (see `createEdgeServer`).
 */
export async function listen(
  app: http.RequestListener,
  host: string,
  port: number,
  logger: Logger,
  options: ListenOptions = {},
): Promise<RunningServer> {
  const server = createEdgeServer(app, logger);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, reusePort: options.reusePort === true }, () => resolve());
  });
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  logger.info({ host, port: actual }, 'listening');
  let metrics: MetricsListener | undefined;
  if (options.metrics) {
    try {
      metrics = await serveMetrics(options.metrics.source, options.metrics.host, options.metrics.port, logger);
    } catch (err) {
      server.close();
      throw err;
    }
  }
  return {
    server,
    port: actual,
    metrics,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          void (metrics?.close() ?? Promise.resolve()).then(resolve);
        });
        server.closeIdleConnections();
      }),
  };
}
