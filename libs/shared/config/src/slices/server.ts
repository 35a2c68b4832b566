import { z } from 'zod';
import { booleanFlag, intFrom, optionalPort, optionalString, splitList } from '../parsers';
import { omittable, slice, variable } from '../variable';

/** A browser origin as sent in `Origin`: scheme, host, optional port; nothing else. */
const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?$/;

/** A rate limit: requests per second, with an optional burst (`100` or `100/200`). */
export interface RatePolicy {
  /** Sustained requests per second. */
  readonly perSecond: number;
  /** Requests that may arrive at once after a quiet period (≥ 1; default = `perSecond`). */
  readonly burst: number;
}

/** `RATE`, `RATE/BURST` (positive integers, burst ≥ 1), or unset/empty = no limit. */
const ratePolicy = z
  .string()
  .optional()
  .transform((v, ctx): RatePolicy | undefined => {
    if (v === undefined || v.trim() === '') return undefined;
    const m = /^\s*([1-9][0-9]{0,6})\s*(?:\/\s*([1-9][0-9]{0,6})\s*)?$/.exec(v);
    if (!m) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be requests per second, optionally with a burst: 100 or 100/200 (integers 1..9999999)',
      });
      return z.NEVER;
    }
    const perSecond = Number(m[1]);
    return { perSecond, burst: m[2] === undefined ? perSecond : Number(m[2]) };
  });

const corsOrigins = z
  .string()
  .default('')
  .transform((value, ctx) => {
    const items = splitList(value);
    for (const item of items) {
      if (!ORIGIN.test(item)) {
        ctx.addIssue({
          code: 'custom',
          message: `"${item}" is not an origin (scheme://host[:port], no path, no wildcard)`,
        });
        return z.NEVER;
      }
    }
    return [...new Set(items)];
  });

export const NODE_ENV = variable(
  'NODE_ENV',
  '`production` turns GraphiQL off and requires AUTH_JWT_SECRET or AUTH_JWKS_URL.',
  z.enum(['development', 'production', 'test']).default('development'),
);

const HOST = variable('HOST', 'Interface the servers bind.', z.string().default('0.0.0.0'));

/** The processes and their HTTP edge: ports, CORS, body limits, metrics listeners, rate limits. */
export const server = slice({
  nodeEnv: NODE_ENV,
  logLevel: variable(
    'LOG_LEVEL',
    'pino level.',
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
  host: HOST,
  port: variable('PORT', 'REST API port.', intFrom(0, 65535).default(3000)),
  graphqlPort: variable('GRAPHQL_PORT', 'GraphQL port.', intFrom(0, 65535).default(4000)),
  apiProcesses: variable(
    'API_PROCESSES',
    'REST processes npm start runs on PORT, each listening with reusePort (Node >= 22.12) and restarted alone.',
    intFrom(1, 64).default(2),
  ),
  shutdownGraceMs: variable(
    'SHUTDOWN_GRACE_MS',
    'How long a stopping process waits for in-flight work.',
    intFrom(0, 120_000).default(10_000),
  ),
  corsOrigins: variable(
    'CORS_ORIGINS',
    'Origins allowed to call the APIs from a browser, comma-separated; empty = CORS off.',
    corsOrigins,
  ),
  graphqlMaxBodyBytes: variable(
    'GRAPHQL_MAX_BODY_BYTES',
    'Largest GraphQL request body accepted (413 above it).',
    intFrom(1024, 16 * 1024 * 1024).default(100 * 1024),
  ),
  /** `/metrics` on a separate internal listener per process instead of the public port (unset = public port). */
  metrics: {
    host: variable('METRICS_HOST', 'Interface of the internal metrics listeners (default HOST).', optionalString, HOST),
    apiPort: variable(
      'METRICS_PORT',
      'Internal /metrics port of the REST process (npm start: METRICS_PORT + N - 1 for process N).',
      optionalPort,
    ),
    graphqlPort: variable('GRAPHQL_METRICS_PORT', 'Internal /metrics port of the GraphQL process.', optionalPort),
    workerPort: omittable(variable('WORKER_METRICS_PORT', '/metrics port of each worker process.', optionalPort)),
  },
  rateLimit: {
    perKey: variable(
      'RATE_LIMIT_PER_KEY',
      'Requests per second per API key, `RATE` or `RATE/BURST`; unset = off.',
      ratePolicy,
    ),
    perTenant: variable('RATE_LIMIT_PER_TENANT', 'The same for all keys of a tenant together.', ratePolicy),
  },
  adminUi: variable('ADMIN_UI', 'The BullMQ dashboard at /admin/queues (admin keys only).', booleanFlag(true)),
});
