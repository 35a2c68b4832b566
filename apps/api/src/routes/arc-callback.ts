import type { NextFunction, Request, Response, Router } from 'express';
import { ARC_CALLBACK_BODY_LIMIT, arcCallbackReceiver } from '@proofline/chain-arc';
import type { ArcCallbackQueue, CallbackRefusal } from '@proofline/chain-arc';
import { AppError } from '@proofline/shared-errors';
import { jsonBody } from '@proofline/shared-http';
import { json, problems, UNAVAILABLE } from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';

export interface ArcCallbackDeps {
  /** ARC_CALLBACK_TOKEN: ARC sends it back as `Authorization: Bearer …`. */
  readonly token: string;
  /** Where accepted batches go (QUEUES.arcCallbacks, on the app's bounded BullMQ connection). */
  readonly queue: ArcCallbackQueue;
}

/**
 * `POST /arc/callback` (mounted only when ARC_CALLBACK_URL and ARC_CALLBACK_TOKEN are set): the
 * HTTP adapter of chain-arc's callback receiver (arc-callbacks.ts). The token is checked before
 * the body is read (401 `ARC_CALLBACK_UNAUTHORIZED`); a body over ARC_CALLBACK_BODY_LIMIT is 413
 * and never read; a body that is not a callback is 400 `ARC_CALLBACK_INVALID`. The batch is then
 * queued and answered 200; the worker's arc-callbacks role verifies and stores it. With Redis
 * unavailable the answer is 503 (ARC's callbacker retries any non-2xx answer): never 200 without
 * the job stored.
 */
export const ARC_CALLBACK_ROUTES = routeTable({
  base: '',
  tag: 'Operations',
  internal: 'Called by ARC only, with the token this deployment gave it; not part of the client API.',
  routes: {
    arcCallback: {
      method: 'post',
      path: '/arc/callback',
      security: 'none',
      summary: 'ARC status callbacks, single or batched (Authorization: Bearer ARC_CALLBACK_TOKEN).',
      responses: {
        '200': json(
          'Queued: the worker verifies every MINED item against the headers source and stores its proof.',
          { type: 'object' },
          { received: true, queued: 1 },
        ),
      },
      errors: problems(
        {
          400: {
            codes: ['ARC_CALLBACK_INVALID', 'BODY_INVALID_JSON'],
            why: 'The body is not an ARC callback.',
          },
          401: { codes: ['ARC_CALLBACK_UNAUTHORIZED'], why: 'Missing or wrong Bearer token; nothing was read.' },
          413: { codes: ['CONTENT_LENGTH_LIMIT_EXCEEDED'], why: 'Body over 2 MiB (ARC_CALLBACK_BODY_LIMIT).' },
          415: { codes: ['UNSUPPORTED_MEDIA_TYPE'], why: 'Body not sent as application/json.' },
        },
        UNAVAILABLE,
      ),
    },
  },
});

export function arcCallbackRoutes(deps: ArcCallbackDeps): Router {
  const receiver = arcCallbackReceiver(deps);
  const problem = (r: CallbackRefusal) =>
    new AppError({ errorCode: r.errorCode, httpStatus: r.httpStatus, detail: r.detail });
  const authorize = (req: Request, _res: Response, next: NextFunction) => {
    const refused = receiver.authorize(req.header('authorization'));
    next(refused ? problem(refused) : undefined);
  };
  const receive = async (req: Request, res: Response) => {
    // A failed enqueue (Redis unavailable) throws: the problem handler answers 503 REDIS_UNAVAILABLE.
    const outcome = await receiver.receive(req.body, req.header('authorization'));
    if (outcome.httpStatus !== 200) throw problem(outcome);
    res.json(outcome.answer);
  };
  return mountRoutes(ARC_CALLBACK_ROUTES, {
    arcCallback: [authorize, ...jsonBody(String(ARC_CALLBACK_BODY_LIMIT)), receive],
  });
}
