import type { Router } from 'express';
import { unavailable } from '@proofline/shared-errors';
import type { MetricsSource } from '@proofline/shared-http';
import { APP_VERSION } from '@proofline/shared-config';
import { knownDown, liveWorkers, pingMasters } from '@proofline/shared-redis';
import { readPublicationPause } from '@proofline/records-publication';
import type { PauseState } from '@proofline/records-publication';
import type { ApiDeps } from '../deps';
import { json, retryAfter, text } from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';
import { Readiness } from '../openapi/schemas';

/**
 * `/liveness` (process up), `/readiness` and `/metrics`. Readiness: this instance can serve, i.e.
 * its own Redis connection answers within a second. Workers are reported (`checks.workers`, the
 * live heartbeats) but do not decide: one worker outage must not mark every API replica unready
 * (accepted writes wait in the outbox). So is ARC's fee policy (`checks.feePolicy`): while it is
 * unknown only writes are refused, reads still serve. A draining process answers 503 before this route
 * (lifecycle.ts).
 */
export const HEALTH_ROUTES = routeTable({
  base: '',
  tag: 'Health',
  routes: {
    liveness: {
      method: 'get',
      path: '/liveness',
      security: 'none',
      summary: 'The process is up.',
      responses: { '200': text('Healthy', 'text/plain', 'Healthy', { type: 'string', const: 'Healthy' }) },
    },
    readiness: {
      method: 'get',
      path: '/readiness',
      security: 'none',
      summary: 'This process can serve (its Redis connection answers).',
      responses: {
        '200': json('Ready.', Readiness, {
          status: 'ready',
          appVersion: APP_VERSION,
          checks: { redis: 'up', workers: 2, draining: false, feePolicy: 'known' },
        }),
        '503': json(
          'Not ready: Redis unreachable, the process still starting, or draining after SIGTERM.',
          Readiness,
          { status: 'not-ready', appVersion: APP_VERSION, checks: { redis: 'down', workers: null, draining: false } },
          retryAfter(),
        ),
      },
    },
    metrics: {
      method: 'get',
      path: '/metrics',
      security: 'none',
      summary: 'Prometheus metrics.',
      description:
        'Requests by route pattern and status, latency histogram, BullMQ job counts, records pending publication, chain tip height, process metrics. With METRICS_PORT set, served only on that internal port.',
      responses: {
        '200': text(
          'Prometheus text exposition format.',
          'text/plain',
          'http_requests_total{method="GET",route="/liveness",status="200"} 1\n',
        ),
      },
      errors: {
        503: {
          codes: ['METRICS_UNAVAILABLE', 'REDIS_UNAVAILABLE'],
          why: 'A source (Redis) did not answer.',
          headers: retryAfter,
        },
      },
    },
  },
});

/**
 * `metrics`: what the public `/metrics` serves; undefined when this app does not serve it (no
 * metrics, or METRICS_PORT set: the internal listener in server.ts serves them).
 */
export function healthRoutes(deps: ApiDeps, metrics?: MetricsSource): Router {
  return mountRoutes(HEALTH_ROUTES, {
    liveness: [
      (_req, res) => {
        res.type('text/plain').send('Healthy');
      },
    ],
    readiness: [
      async (_req, res) => {
        let redisOk = false;
        let workers: number | null = null;
        let pause: PauseState | null | undefined;
        try {
          // A connection known to be down (refused, reconnecting, closed; a cluster master gone) is
          // not-ready at once, without a round trip; a first connection still being made gets its bounded ping.
          if (knownDown(deps.redis)) throw new Error(`redis connection ${deps.redis.status}`);
          const [pong, live, paused] = await Promise.all([
            withTimeout(pingMasters(deps.redis), 1000),
            withTimeout(liveWorkers(deps.redis, deps.config.redisPrefix), 1000).catch(() => null),
            withTimeout(readPublicationPause(deps.redis, deps.config.redisPrefix), 1000).catch(() => undefined),
          ]);
          redisOk = pong === 'PONG';
          workers = live;
          pause = paused;
        } catch {
          redisOk = false;
        }
        if (!redisOk) res.setHeader('Retry-After', '1');
        res.status(redisOk ? 200 : 503).json({
          status: redisOk ? 'ready' : 'not-ready',
          appVersion: APP_VERSION,
          checks: {
            redis: redisOk ? 'up' : 'down',
            workers,
            draining: false,
            ...(deps.feePolicy ? { feePolicy: deps.feePolicy().policy } : {}),
            ...(pause === undefined ? {} : { publication: pause ? 'paused' : 'running' }),
            ...(pause ? { publicationDetail: `since ${pause.since}: ${pause.detail}` } : {}),
          },
        });
      },
    ],
    metrics: metrics
      ? [
          async (_req, res) => {
            try {
              const text = await metrics.metrics();
              res.type(metrics.contentType).send(text);
            } catch (err) {
              throw unavailable('METRICS_UNAVAILABLE', 'Metrics could not be collected (is Redis reachable?).', 5, err);
            }
          },
        ]
      : null,
  });
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timeout')), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
