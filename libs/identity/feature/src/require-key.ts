import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { hasAnyPermission } from '@proofline/identity-domain';
import type { Permission, Principal } from '@proofline/identity-domain';
import { identityErrors as E } from './errors';
import type { Admission } from './admission';
import type { Authenticator } from './authenticator';

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
 * Between the two, the authenticator's admission (rate limits), when it has one, admits the
 * caller (its headers go on the response) or refuses it (429 RATE_LIMITED), so a key cannot
 * flood the service with requests it lacks the permission for either.
 *
 * @example router.post('/records', requireKey(deps.identity.authenticator, 'Issuer_Admin', 'Issuer_User'), handler)
 */
export function requireKey(
  authenticator: Pick<Authenticator, 'authenticate'> & { readonly admission?: Admission | undefined },
  ...permissions: Permission[]
): RequestHandler {
  const { admission } = authenticator;
  const check = async (req: Request, res: Response): Promise<Principal> => {
    const principal = await authenticator.authenticate(req.header('x-api-key'));
    if (admission) {
      const admitted = await admission(principal);
      for (const [name, value] of Object.entries(admitted.headers)) res.setHeader(name, value);
    }
    if (!hasAnyPermission(principal.permissions, permissions)) throw E.permissionDenied(permissions);
    return principal;
  };
  return (req: Request, res: Response, next: NextFunction) => {
    check(req, res).then(
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
