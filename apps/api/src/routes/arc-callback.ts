import { Router } from 'express';
import type { NextFunction, Request, Response } from 'express';
import { arcCallbackReceiver } from '@proofline/chain-arc';
import type { ArcChain, CallbackRefusal } from '@proofline/chain-arc';
import { AppError } from '@proofline/shared-errors';
import { jsonBody } from '@proofline/shared-http';
import type { Logger } from '@proofline/shared-logger';
import type { Redis } from '@proofline/shared-redis';

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
export function arcCallbackRoutes(deps: ArcCallbackDeps): Router {
  const router = Router();
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
  router.post('/arc/callback', authorize, ...jsonBody('1mb'), async (req: Request, res: Response) => {
    const outcome = await receiver.receive(req.body, req.header('authorization'));
    if (outcome.httpStatus !== 200) throw problem(outcome);
    res.json(outcome.answer);
  });
  return router;
}
