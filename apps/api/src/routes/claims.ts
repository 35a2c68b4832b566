import type { Router } from 'express';
import type { RequestHandler } from 'express';
import type { ClaimsService } from '@proofline/identity-claims';
import { json, problems, retryAfter } from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';
import type { RouteDecl } from '../openapi/route';
import { GrantedClaims } from '../openapi/schemas';

const grantedClaims = (summary: string): RouteDecl => ({
  method: 'get',
  path: '',
  security: 'bearer',
  summary,
  description: 'Without credentials: 200 with no claims.',
  responses: {
    '200': json('Claims (empty without credentials).', GrantedClaims, { grantedClaims: ['Issuer', 'Verifier'] }),
  },
  errors: problems(
    { 401: { codes: ['INVALID_AUTHENTICATION_CREDENTIALS'], why: 'A bad, expired or wrongly signed token.' } },
    {
      503: {
        codes: ['REDIS_UNAVAILABLE'],
        why: 'The development signing secret (kept in Redis) could not be read.',
        headers: retryAfter,
      },
    },
  ),
});

/** `GET /auth/granted-claims` (verifier base) and the same under `/api/v1`. Bearer JWT, not x-api-key. */
export const CLAIMS_ROUTES = routeTable({
  base: '',
  tag: 'Verifier',
  routes: {
    grantedClaims: { ...grantedClaims('Claims granted to the bearer of the token.'), path: '/auth/granted-claims' },
    grantedClaimsV1: { ...grantedClaims('Same as /auth/granted-claims.'), path: '/api/v1/auth/granted-claims' },
  },
});

export function claimsRoutes(claims: ClaimsService): Router {
  const handler: RequestHandler = async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json(await claims.grantedClaims(req.header('authorization')));
  };
  return mountRoutes(CLAIMS_ROUTES, { grantedClaims: [handler], grantedClaimsV1: [handler] });
}
