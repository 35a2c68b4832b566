import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Permission, Principal } from '@proofline/identity-domain';
import { authorize } from './authorize';
import { identityErrors as E } from './errors';
import type { IdentityService } from './identity-service';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by {@link requireKey}: the authenticated caller. */
    principal?: Principal;
  }
}

/**
 * Express middleware: authenticates `x-api-key` (401 API_KEY_MISSING / API_KEY_INVALID /
 * API_KEY_REVOKED / API_KEY_EXPIRED) and, when `permissions` are given, requires one of them
 * (403 PERMISSION_DENIED). With no permissions any valid key passes. Sets `req.principal`.
 *
 * @example router.post('/records', requireKey(deps.identity, 'Issuer_Admin', 'Issuer_User'), handler)
 */
export function requireKey(identity: IdentityService, ...permissions: Permission[]): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    authorize(identity, req.header('x-api-key'), ...permissions).then(
      (principal) => {
        req.principal = principal;
        req.log = req.log.child({ keyId: principal.keyId, tenant: principal.tenant });
        next();
      },
      (err: unknown) => next(err),
    );
  };
}

/** The principal set by {@link requireKey}; throws 401 when the route forgot to require a key. */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw E.keyMissing();
  return req.principal;
}
