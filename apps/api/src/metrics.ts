import type { RequestHandler, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What `/metrics` reads from the rest of the system at scrape time (one small read each). */
export interface MetricsSources {
  /** BullMQ job counts per queue (waiting, active, delayed, failed, ...). */
  queueCounts(): Promise<Record<string, Record<string, number>>>;
  /** Accepted records not yet published (the outbox). */
  pendingPublications(): Promise<number>;
  /** Height of the chain tip (-1 before the genesis block). */
  tipHeight(): Promise<number>;
  /** The ARC path: published transactions waiting for a verified proof, and ARC's refusals by code. */
  readonly arc?: {
    unproven(): Promise<number>;
    rejections(): Promise<Record<string, number>>;
  };
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
    // Read from Redis: the same in every API process; over several processes take max, not sum.
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
    // Read from Redis: the same in every API process; over several processes take max, not sum.
    help: 'Accepted records waiting for publication (outbox size).',
    registers: [registry],
    async collect() {
      this.set(await sources.pendingPublications());
    },
  });
  new Gauge({
    name: 'proofline_chain_tip_height',
    // Read from Redis: the same in every API process; over several processes take max, not sum.
    help: 'Height of the chain tip.',
    registers: [registry],
    async collect() {
      this.set(await sources.tipHeight());
    },
  });

  const arc = sources.arc;
  if (arc) {
    new Gauge({
      name: 'proofline_arc_unproven_transactions',
      help: 'Published record transactions waiting for a verified proof (the confirmation watch set).',
      registers: [registry],
      async collect() {
        this.set(await arc.unproven());
      },
    });
    new Gauge({
      name: 'proofline_arc_rejected_transactions',
      help: 'Record transactions ARC refused for good, by ARC code (e.g. 461, 465, DOUBLE_SPEND_ATTEMPTED), since the deployment started.',
      labelNames: ['code'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const [code, n] of Object.entries(await arc.rejections())) this.set({ code }, n);
      },
    });
  }

  // One listener shared by every request (no timer closure per request); label objects are
  // reused per (method, route, status), which the route patterns bound.
  const labelsCache = new Map<
    string,
    {
      readonly count: { method: string; route: string; status: string };
      readonly time: { method: string; route: string };
    }
  >();
  function recordFinished(this: Response): void {
    const req = this.req;
    const seconds = (performance.now() - ((this as TimedResponse)[STARTED_AT] ?? 0)) / 1000;
    const route = routePattern(req.originalUrl, (req.route as { path?: unknown } | undefined)?.path);
    const status = String(this.statusCode);
    const key = `${req.method} ${status} ${route}`;
    let labels = labelsCache.get(key);
    if (!labels) {
      labels = { count: { method: req.method, route, status }, time: { method: req.method, route } };
      if (labelsCache.size < MAX_CACHED_LABELS) labelsCache.set(key, labels);
    }
    requests.inc(labels.count);
    duration.observe(labels.time, seconds);
  }
  const middleware: RequestHandler = (_req, res, next) => {
    (res as TimedResponse)[STARTED_AT] = performance.now();
    res.once('finish', recordFinished);
    next();
  };
  return { registry, middleware };
}

/** Bound of the label cache (routes × methods × statuses stay far below it). */
const MAX_CACHED_LABELS = 1000;
const STARTED_AT = Symbol('proofline.metricsStartedAt');
type TimedResponse = Response & { [STARTED_AT]?: number };

/**
 * The full route pattern of a request: the mount prefix (the leading segments of the URL that
 * the route's own pattern did not match) plus the route's pattern. Computed from the URL because
 * Express resets `req.baseUrl` once an error leaves a mounted router.
 */
export function routePattern(originalUrl: string, routePath: unknown): string {
  if (typeof routePath !== 'string') return 'unmatched';
  const query = originalUrl.indexOf('?');
  const urlSegments = segmentsOf(query === -1 ? originalUrl : originalUrl.slice(0, query));
  const routeSegments = segmentsOf(routePath);
  const prefix = urlSegments.slice(0, Math.max(0, urlSegments.length - routeSegments.length));
  return `/${[...prefix, ...routeSegments].join('/')}`;
}

/** Non-empty path segments ('//' and a trailing '/' add none). */
function segmentsOf(path: string): string[] {
  return path.split('/').filter((x) => x.length > 0);
}
