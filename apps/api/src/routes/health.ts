import { Router } from 'express';
import { APP_VERSION } from '@proofline/shared-config';
import { liveWorkers } from '@proofline/shared-redis';
import type { ApiDeps } from '../deps';

/**
 * `/liveness` (process up) and `/readiness`: this instance can serve, i.e. its own Redis
 * connection answers within a second. Workers are reported (`checks.workers`, the live
 * heartbeats) but do not decide: one worker outage must not mark every API replica unready (issue
 * 10; accepted writes wait in the outbox). A draining process answers 503 before this route
 * (lifecycle.ts).
 */
export function healthRoutes(deps: ApiDeps): Router {
  const router = Router();
  router.get('/liveness', (_req, res) => {
    res.type('text/plain').send('Healthy');
  });
  router.get('/readiness', async (_req, res) => {
    let redisOk = false;
    let workers: number | null = null;
    try {
      // A connection known to be down (refused, reconnecting, closed) is not-ready at once, without
      // a round trip; a first connection still being made gets its bounded ping.
      if (DOWN.has(deps.redis.status)) throw new Error(`redis connection ${deps.redis.status}`);
      const [pong, live] = await Promise.all([
        withTimeout(deps.redis.ping(), 1000),
        withTimeout(liveWorkers(deps.redis, deps.config.redisPrefix), 1000).catch(() => null),
      ]);
      redisOk = pong === 'PONG';
      workers = live;
    } catch {
      redisOk = false;
    }
    if (!redisOk) res.setHeader('Retry-After', '1');
    res.status(redisOk ? 200 : 503).json({
      status: redisOk ? 'ready' : 'not-ready',
      appVersion: APP_VERSION,
      checks: { redis: redisOk ? 'up' : 'down', workers, draining: false },
    });
  });
  return router;
}

/** ioredis connection states in which a command cannot be answered now. */
const DOWN = new Set(['reconnecting', 'close', 'end']);

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
