import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { APP_VERSION } from '@proofline/shared-config';
import { redisUnavailable, toProblem } from '@proofline/shared-errors';
import { requestIdOf } from '@proofline/shared-http';

/**
 * The phases of one REST process, as its outer request listener sees them:
 * - `starting`: the process listens at once, before Redis is reachable (an orchestrator must not
 *   kill a healthy process that waits for Redis): `/liveness` 200, `/readiness` 503, every other
 *   request 503 REDIS_UNAVAILABLE with Retry-After;
 * - `serving`: everything goes to the Express app;
 * - `draining` (SIGTERM received): `/readiness` answers 503 at once so a load balancer stops
 *   sending; requests still arriving on open connections are served while the server drains.
 */
export type Phase = 'starting' | 'serving' | 'draining';

export interface Lifecycle {
  readonly listener: RequestListener;
  readonly phase: Phase;
  /** Hands requests to the composed app (starting → serving). */
  serve(app: RequestListener): void;
  /** SIGTERM: readiness 503 from now on. */
  drain(): void;
}

export function createLifecycle(): Lifecycle {
  let phase: Phase = 'starting';
  let app: RequestListener | undefined;
  const listener: RequestListener = (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (phase === 'serving' && app) return app(req, res);
    if (path === '/liveness' && phase === 'starting')
      return void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('Healthy');
    if (path === '/readiness') return notReady(req, res, phase);
    if (app) return app(req, res);
    unavailable(req, res);
  };
  return {
    listener,
    get phase() {
      return phase;
    },
    serve(composed) {
      app = composed;
      if (phase === 'starting') phase = 'serving';
    },
    drain() {
      phase = 'draining';
    },
  };
}

function notReady(req: IncomingMessage, res: ServerResponse, phase: Phase): void {
  res.writeHead(503, {
    'content-type': 'application/json; charset=utf-8',
    'x-request-id': requestIdOf(req.headers['x-request-id']),
    'retry-after': '1',
  });
  res.end(
    JSON.stringify({
      status: 'not-ready',
      appVersion: APP_VERSION,
      checks: { redis: phase === 'starting' ? 'down' : 'unknown', draining: phase === 'draining' },
    }),
  );
}

function unavailable(req: IncomingMessage, res: ServerResponse): void {
  const error = redisUnavailable();
  const problem = toProblem(error, (req.url ?? '/').split('?')[0]);
  // The body is not read: close the connection after the answer so it is not misparsed.
  res.writeHead(503, {
    'content-type': 'application/problem+json',
    'x-request-id': requestIdOf(req.headers['x-request-id']),
    connection: 'close',
    ...error.headers,
  });
  res.end(JSON.stringify(problem));
}
