import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What `/metrics` reads from the rest of the system at scrape time (one small read each). */
export interface MetricsSources {
  /** BullMQ job counts per queue (waiting, active, delayed, failed, ...). */
  queueCounts(): Promise<Record<string, Record<string, number>>>;
  /** Accepted records not yet published (the outbox). */
  pendingPublications(): Promise<number>;
  /** Height of the chain tip (-1 before the genesis block). */
  tipHeight(): Promise<number>;
}

export interface ApiMetrics {
  readonly registry: Registry;
  /** Records one line per finished request: method, route pattern (never the raw path), status. */
  readonly middleware: RequestHandler;
}

/**
 * Prometheus metrics of the REST process. Route labels are Express route patterns
 * (`/api/v1/linkedrecords/:txId/status`), so ids never explode the label cardinality; requests
 * no route matched are labelled `unmatched`.
 */
export function createApiMetrics(sources: MetricsSources): ApiMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ app: 'proofline-api' });
  collectDefaultMetrics({ register: registry, prefix: 'proofline_' });

  const requests = new Counter({
    name: 'proofline_http_requests_total',
    help: 'HTTP requests by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'proofline_http_request_duration_seconds',
    help: 'HTTP request duration by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new Gauge({
    name: 'proofline_queue_jobs',
    help: 'BullMQ jobs per queue and state.',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const [queue, counts] of Object.entries(await sources.queueCounts())) {
        for (const [state, n] of Object.entries(counts)) this.set({ queue, state }, n);
      }
    },
  });
  new Gauge({
    name: 'proofline_records_pending_publication',
    help: 'Accepted records waiting for publication (outbox size).',
    registers: [registry],
    async collect() {
      this.set(await sources.pendingPublications());
    },
  });
  new Gauge({
    name: 'proofline_chain_tip_height',
    help: 'Height of the chain tip.',
    registers: [registry],
    async collect() {
      this.set(await sources.tipHeight());
    },
  });

  const middleware: RequestHandler = (req, res, next) => {
    const stop = duration.startTimer();
    res.on('finish', () => {
      const route = routePattern(req.originalUrl, (req.route as { path?: unknown } | undefined)?.path);
      requests.inc({ method: req.method, route, status: String(res.statusCode) });
      stop({ method: req.method, route });
    });
    next();
  };
  return { registry, middleware };
}

/**
 * The full route pattern of a request: the mount prefix (the leading segments of the URL that
 * the route's own pattern did not match) plus the route's pattern. Computed from the URL because
 * Express resets `req.baseUrl` once an error leaves a mounted router.
 */
export function routePattern(originalUrl: string, routePath: unknown): string {
  if (typeof routePath !== 'string') return 'unmatched';
  const urlSegments = (originalUrl.split('?')[0] ?? '').split('/').filter((x) => x.length > 0);
  const routeSegments = routePath.split('/').filter((x) => x.length > 0);
  const prefix = urlSegments.slice(0, Math.max(0, urlSegments.length - routeSegments.length));
  const full = [...prefix, ...routeSegments].join('/');
  return `/${full}`;
}
