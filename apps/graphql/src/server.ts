import type http from 'node:http';
import type { Config } from '@proofline/shared-config';
import { APP_VERSION } from '@proofline/shared-config';
import { createEdgeServer, guardRequests, requestIdOf, serveMetrics } from '@proofline/shared-http';
import type { MetricsListener } from '@proofline/shared-http';
import type { Logger } from '@proofline/shared-logger';
import { createGraphQL } from './app';
import type { GraphQLServer } from './app';
import type { GraphQLDeps } from './deps';
import { httpHandler } from './http';
import { createGraphQLMetrics } from './metrics';
import type { GraphQLMetrics } from './metrics';

export interface RunningGraphQL {
  readonly server: http.Server;
  readonly yoga: GraphQLServer;
  readonly metrics: GraphQLMetrics;
  /** The public port (GRAPHQL_PORT; 0 picks a free one). */
  readonly port: number;
  /** The internal `/metrics` listener when `GRAPHQL_METRICS_PORT` is set. */
  readonly metricsListener: MetricsListener | undefined;
  /** Stops accepting, lets requests finish (SSE streams are cut after `graceMs`), closes the metrics listener. */
  close(graceMs: number): Promise<void>;
}

/**
 * The GraphQL process's HTTP servers, as main.ts and the tests run them: yoga behind the edge
 * (http.ts), Node's parser refusals as problem+json, `/metrics` on the public port or, with
 * `GRAPHQL_METRICS_PORT`, on an internal listener only.
 */
export async function startGraphQLServer(
  deps: GraphQLDeps & { readonly redis: { ping(): Promise<string> } },
  config: Config,
  logger: Logger,
  port = config.graphqlPort,
  /** A server already listening (main.ts listens before Redis is reachable): it takes over its requests. */
  listening?: http.Server,
): Promise<RunningGraphQL> {
  const metrics = createGraphQLMetrics('/graphql');
  const yoga = createGraphQL(deps, [metrics.plugin]);
  const metricsPort = config.metrics.graphqlPort;
  const handler = httpHandler({
    redis: deps.redis,
    yoga: (req, res) => yoga.handle(req, res),
    logger,
    corsOrigins: config.corsOrigins,
    maxBodyBytes: config.graphqlMaxBodyBytes,
    metrics,
    publicMetrics: metricsPort === undefined,
  });
  let server: http.Server;
  if (listening) {
    server = listening;
    server.removeAllListeners('request');
    server.on('request', guardRequests(handler, logger));
  } else {
    server = await listenGraphQL(handler, config.host, port, logger);
  }
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  let metricsListener: MetricsListener | undefined;
  if (metricsPort !== undefined) {
    try {
      metricsListener = await serveMetrics(metrics.registry, config.metrics.host, metricsPort, logger);
    } catch (err) {
      server.close();
      throw err;
    }
  }
  return {
    server,
    yoga,
    metrics,
    port: actual,
    metricsListener,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          void (metricsListener?.close() ?? Promise.resolve()).then(resolve);
        });
        server.closeIdleConnections();
      }),
  };
}

/** The GraphQL process's HTTP server with its timeouts and protocol-refusal answers (`createEdgeServer`), listening. */
export async function listenGraphQL(
  handler: http.RequestListener,
  host: string,
  port: number,
  logger: Logger,
): Promise<http.Server> {
  const server = createEdgeServer(handler, logger);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

/**
 * Requests before the app is composed (Redis not reachable yet): `/liveness` 200, `/readiness`
 * 503, everything else a GraphQL-shaped 503 REDIS_UNAVAILABLE with Retry-After.
 */
export function startingHandler(): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const id = requestIdOf(req.headers['x-request-id']);
    if (path === '/liveness')
      return void res.writeHead(200, { 'content-type': 'text/plain', 'x-request-id': id }).end('Healthy');
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      'x-request-id': id,
      'retry-after': '1',
      connection: 'close',
    };
    if (path === '/readiness')
      return void res
        .writeHead(503, headers)
        .end(JSON.stringify({ status: 'not-ready', appVersion: APP_VERSION, checks: { redis: 'down' } }));
    res.writeHead(503, headers).end(
      JSON.stringify({
        errors: [
          {
            message: 'The data store is temporarily unavailable. Retry after the Retry-After delay.',
            extensions: { code: 'REDIS_UNAVAILABLE', status: 503 },
          },
        ],
      }),
    );
  };
}
