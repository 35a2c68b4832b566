import type { IncomingMessage, ServerResponse } from 'node:http';
import { APP_VERSION } from '@proofline/shared-config';

/**
 * The GraphQL process's HTTP entry: `/liveness` (process up), `/readiness` (Redis answers: the
 * facade reads everything from it), everything else to yoga.
 */
export function httpHandler(redis: { ping(): Promise<string> }, yoga: (req: IncomingMessage, res: ServerResponse) => unknown) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/liveness') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('Healthy');
      return;
    }
    if (path === '/readiness') {
      const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('timeout'), 1000).unref());
      void Promise.race([redis.ping().catch(() => 'down'), timeout]).then((pong) => {
        const ready = pong === 'PONG';
        res
          .writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: ready ? 'ready' : 'not-ready', appVersion: APP_VERSION, checks: { redis: ready ? 'up' : 'down' } }));
      });
      return;
    }
    void yoga(req, res);
  };
}
