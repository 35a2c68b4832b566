import { Router } from 'express';
import type { Request, Response } from 'express';
import type { ClaimsService } from '@proofline/identity-claims';

/** `GET /auth/granted-claims` (verifier base) and the same under `/api/v1`. Bearer JWT, not x-api-key. */
export function claimsRoutes(claims: ClaimsService): Router {
  const router = Router();
  const handler = async (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json(await claims.grantedClaims(req.header('authorization')));
  };
  router.get('/auth/granted-claims', handler);
  router.get('/api/v1/auth/granted-claims', handler);
  return router;
}
