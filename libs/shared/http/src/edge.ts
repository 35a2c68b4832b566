import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from '@proofline/shared-logger';
import { createEdgeServer } from './protocol';

// Edge rules shared by the REST (Express) and the GraphQL (node:http + yoga) servers, so both
// answer the same way: CORS and an internal /metrics listener (protocol refusals: protocol.ts).

/** Headers a browser may send cross-origin, and response headers it may read. */
const ALLOWED_HEADERS = 'authorization, content-type, x-api-key, x-request-id';
const EXPOSED_HEADERS = 'x-request-id, retry-after, location';

/**
 * CORS response headers for a request, or `undefined` when the request gets none.
 *
 * Off unless `origins` lists origins; a listed `Origin` is echoed exactly (never `*`, never an
 * unlisted origin) and `access-control-allow-credentials` is never sent: the APIs authenticate by
 * header (`x-api-key`, `authorization`), not by cookie, so a page can never ride on a browser's
 * ambient credentials. A preflight (`OPTIONS` with `access-control-request-method`) additionally
 * gets the allowed methods and headers.
 */
export function corsHeaders(
  origins: readonly string[],
  method: string,
  headers: IncomingHttpHeaders,
  methods: string,
): Record<string, string> | undefined {
  const origin = headers.origin;
  if (origins.length === 0 || origin === undefined || !origins.includes(origin)) return undefined;
  const out: Record<string, string> = {
    'access-control-allow-origin': origin,
    vary: 'origin',
    'access-control-expose-headers': EXPOSED_HEADERS,
  };
  if (method === 'OPTIONS' && headers['access-control-request-method'] !== undefined) {
    out['access-control-allow-methods'] = methods;
    out['access-control-allow-headers'] = ALLOWED_HEADERS;
    out['access-control-max-age'] = '600';
  }
  return out;
}

/** True for a CORS preflight: answered 204 by the edge, never routed. */
export function isPreflight(method: string, headers: IncomingHttpHeaders): boolean {
  return method === 'OPTIONS' && headers.origin !== undefined && headers['access-control-request-method'] !== undefined;
}

/**
 * Express middleware applying {@link corsHeaders}; preflights end here with 204 (a preflight from
 * an unlisted origin also gets 204, without CORS headers, so the browser refuses the call).
 */
export function cors(origins: readonly string[], methods = 'GET, POST, PUT, PATCH, DELETE'): RequestHandler {
  return (req, res, next) => {
    if (origins.length > 0) res.setHeader('vary', 'origin');
    const headers = corsHeaders(origins, req.method, req.headers, methods);
    if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (isPreflight(req.method, req.headers)) {
      res.status(204).end();
      return;
    }
    next();
  };
}

/** What {@link serveMetrics} reads: a prom-client Registry fits. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export interface MetricsListener {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The internal `/metrics` listener (`METRICS_PORT` / `GRAPHQL_METRICS_PORT`): only `GET /metrics`,
 * everything else 404. Rejects (EADDRINUSE) when the port is taken, so two processes configured
 * with the same port fail at start instead of one silently serving the other's figures.
 */
export async function serveMetrics(
  source: MetricsSource,
  host: string,
  port: number,
  logger: Logger,
): Promise<MetricsListener> {
  const server = createEdgeServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res
        .writeHead(404, { 'content-type': 'application/problem+json' })
        .end(JSON.stringify({ title: 'Not Found', status: 404, errorCode: 'ROUTE_NOT_FOUND' }));
      return;
    }
    source.metrics().then(
      (text) => res.writeHead(200, { 'content-type': source.contentType }).end(text),
      (err: unknown) => {
        logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'metrics could not be collected');
        res
          .writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '5' })
          .end(JSON.stringify({ title: 'Service Unavailable', status: 503, errorCode: 'METRICS_UNAVAILABLE' }));
      },
    );
  }, logger);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  logger.info({ host, port: actual }, 'metrics listening');
  return {
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
