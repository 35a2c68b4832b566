import type { IncomingMessage, ServerResponse } from 'node:http';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The operation type a request carried, or `none` when it never got that far (bad input, /readiness). */
export type OperationLabel = 'query' | 'mutation' | 'subscription' | 'none';

export interface GraphQLMetrics {
  readonly registry: Registry;
  /** yoga plugin: notes the operation type of each executed document on its Node request. */
  readonly plugin: Plugin;
  /** Starts timing a Node request; counts it when the response finishes. */
  observe(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * Prometheus metrics of the GraphQL process: requests by endpoint, operation type and status, a
 * latency histogram, and the process metrics (CPU, memory, event loop lag, GC). Labels are
 * bounded: the endpoint is `/graphql`, `/readiness`, `/liveness`, `/metrics` or `other`; operation
 * names are never labels (clients choose them).
 */
export function createGraphQLMetrics(graphqlEndpoint: string): GraphQLMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ app: 'proofline-graphql' });
  collectDefaultMetrics({ register: registry, prefix: 'proofline_' });
  const requests = new Counter({
    name: 'proofline_graphql_requests_total',
    help: 'HTTP requests of the GraphQL process by endpoint, operation type and status.',
    labelNames: ['endpoint', 'operation', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'proofline_graphql_request_duration_seconds',
    help: 'Time to the end of the response by endpoint and operation type (subscriptions: the stream lifetime).',
    labelNames: ['endpoint', 'operation'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const operations = new WeakMap<IncomingMessage, OperationLabel>();
  const known = new Set(['/liveness', '/readiness', '/metrics', graphqlEndpoint]);

  const plugin: Plugin = {
    onExecute({ args }) {
      const req = (args.contextValue as { req?: IncomingMessage }).req;
      const op = getOperationAST(args.document, args.operationName ?? undefined);
      if (req && op) operations.set(req, op.operation);
    },
    onSubscribe({ args }) {
      const req = (args.contextValue as { req?: IncomingMessage }).req;
      if (req) operations.set(req, 'subscription');
    },
  };

  return {
    registry,
    plugin,
    observe(req, res) {
      const stop = duration.startTimer();
      res.once('close', () => {
        const path = (req.url ?? '/').split('?')[0] ?? '/';
        const endpoint = known.has(path) ? path : 'other';
        const operation = operations.get(req) ?? 'none';
        requests.inc({ endpoint, operation, status: String(res.statusCode) });
        stop({ endpoint, operation });
      });
    },
  };
}
