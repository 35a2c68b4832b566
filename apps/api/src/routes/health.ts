import { Router } from 'express';
import { APP_VERSION } from '@proofline/shared-config';
import { liveWorkers } from '@proofline/shared-redis';
import type { ApiDeps } from '../deps';

/** `/liveness` (process up) and `/readiness` (Redis answers and at least one worker beats). */
export function healthRoutes(deps: ApiDeps): Router {
  const router = Router();
  router.get('/liveness', (_req, res) => {
    res.type('text/plain').send('Healthy');
  });
  router.get('/readiness', async (_req, res) => {
    let redisOk = false;
    let workers = 0;
    try {
      redisOk = (await withTimeout(deps.redis.ping(), 1000)) === 'PONG';
      workers = await withTimeout(liveWorkers(deps.redis, deps.config.redisPrefix), 1000);
    } catch {
      redisOk = false;
    }
    const ready = redisOk && workers > 0;
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ready' : 'not-ready',
      appVersion: APP_VERSION,
      checks: { redis: redisOk ? 'up' : 'down', workers },
    });
  });
  return router;
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
