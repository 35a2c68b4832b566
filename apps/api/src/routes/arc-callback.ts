import type { NextFunction, Request, Response, Router } from 'express';
import { arcCallbackReceiver } from '@proofline/chain-arc';
import type { ArcChain, CallbackRefusal } from '@proofline/chain-arc';
import { AppError } from '@proofline/shared-errors';
import { jsonBody } from '@proofline/shared-http';
import type { Logger } from '@proofline/shared-logger';
import type { Redis } from '@proofline/shared-redis';
import { json } from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';

export interface ArcCallbackDeps {
  readonly chain: Pick<ArcChain, 'headers' | 'store'>;
  /** ARC_CALLBACK_TOKEN: ARC sends it back as `Authorization: Bearer …`. */
  readonly token: string;
  readonly redis: Redis;
  readonly prefix: string;
  readonly logger: Logger;
}

/**
 * `POST /arc/callback` (mounted only when ARC_CALLBACK_URL and ARC_CALLBACK_TOKEN are set): the
 * HTTP adapter of chain-arc's callback receiver (arc-callbacks.ts: authentication, parsing,
 * proving, tip and block events). The token is checked before the body is read (401
 * `ARC_CALLBACK_UNAUTHORIZED`); a body that is not a callback is 400 `ARC_CALLBACK_INVALID`.
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
          'Received: how many items gave a stored proof, were refused, or are hints for the next poll.',
          { type: 'object' },
          { received: true, proven: 1, refused: 0, hints: 0 },
        ),
      },
      errors: {
        400: { codes: ['ARC_CALLBACK_INVALID'], why: 'The body is not an ARC callback.' },
        401: { codes: ['ARC_CALLBACK_UNAUTHORIZED'], why: 'Missing or wrong Bearer token; nothing was read.' },
      },
    },
  },
});

export function arcCallbackRoutes(deps: ArcCallbackDeps): Router {
  const receiver = arcCallbackReceiver({
    headers: deps.chain.headers,
    store: deps.chain.store,
    token: deps.token,
    logger: deps.logger,
    events: { redis: deps.redis, prefix: deps.prefix },
  });
  const problem = (r: CallbackRefusal) =>
    new AppError({ errorCode: r.errorCode, httpStatus: r.httpStatus, detail: r.detail });
  const authorize = (req: Request, _res: Response, next: NextFunction) => {
    const refused = receiver.authorize(req.header('authorization'));
    next(refused ? problem(refused) : undefined);
  };
  const receive = async (req: Request, res: Response) => {
    const outcome = await receiver.receive(req.body, req.header('authorization'));
    if (outcome.httpStatus !== 200) throw problem(outcome);
    res.json(outcome.answer);
  };
  return mountRoutes(ARC_CALLBACK_ROUTES, { arcCallback: [authorize, ...jsonBody('1mb'), receive] });
}
