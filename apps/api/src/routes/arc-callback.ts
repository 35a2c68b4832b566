import type { NextFunction, Request, Response, Router } from 'express';
import { cachingHeaders, handleArcCallback, parseArcCallback, publishBlockEvent } from '@proofline/chain-arc';
import type { ArcChain } from '@proofline/chain-arc';
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

/** How long the route trusts a main-chain header it fetched (see `cachingHeaders`). */
const HEADER_CACHE_MS = 2000;

/**
 * `POST /arc/callback` (mounted only when ARC_CALLBACK_URL and ARC_CALLBACK_TOKEN are set): ARC's
 * status callbacks, single or batched. The Bearer token is checked first, in constant time (401
 * `ARC_CALLBACK_UNAUTHORIZED`, nothing read); a body that is not a callback is 400
 * `ARC_CALLBACK_INVALID`. MINED items go through the same verify-against-headers-then-store path
 * as polling; everything else is a hint the next poll picks up. Idempotent. Polling stays the
 * ground truth: a lost or refused callback only delays a proof.
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
  // A block's callbacks arrive in many batches at once: one header fetch serves them all.
  const headers = cachingHeaders(deps.chain.headers, HEADER_CACHE_MS);
  const authorize = (req: Request, _res: Response, next: NextFunction) => {
    const outcome = parseArcCallback({}, req.header('authorization'), deps.token);
    if (outcome.httpStatus === 401)
      next(new AppError({ errorCode: outcome.errorCode, httpStatus: 401, detail: outcome.detail }));
    else next();
  };
  const receive = async (req: Request, res: Response) => {
    const outcome = await handleArcCallback(
      { headers, store: deps.chain.store, token: deps.token, logger: deps.logger },
      req.body,
      req.header('authorization'),
    );
    if (outcome.httpStatus !== 200)
      throw new AppError({ errorCode: outcome.errorCode, httpStatus: outcome.httpStatus, detail: outcome.detail });
    if (outcome.blocks.length > 0) {
      // Wake confirmation subscriptions now rather than at the next poll.
      for (const { hash, height } of outcome.blocks) {
        // A verified block above the stored tip moves the tip up (the next poll sets it from the headers source).
        if (((await deps.chain.store.tip())?.height ?? -1) < height) await deps.chain.store.setTip({ hash, height });
        await publishBlockEvent(deps.redis, deps.prefix, deps.chain.store, hash).catch(() => null);
      }
    }
    res.json({
      received: true,
      proven: outcome.proven.length,
      refused: outcome.failed.length,
      hints: outcome.hints.length,
    });
  };
  return mountRoutes(ARC_CALLBACK_ROUTES, { arcCallback: [authorize, ...jsonBody('1mb'), receive] });
}
