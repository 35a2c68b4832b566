import { Router } from 'express';
import { KEY_ADMIN_PERMISSIONS, createKeyBody, revokeKeyBody } from '@proofline/identity-domain';
import type { Permission } from '@proofline/identity-domain';
import { principalOf, requireKey } from '@proofline/identity-feature';
import { jsonBody, parseOr400 } from '@proofline/shared-http';
import type { Identity } from '@proofline/identity-feature';

export const IDENTITY_KEYS_PATH = '/api/v1/auth/identity-api-keys';

/** Identity API key endpoints (spec §4.3). Every call needs Issuer_Admin or Verifier_Admin. */
export function identityKeyRoutes(identity: Pick<Identity, 'authenticator' | 'keys'>): Router {
  const router = Router();
  const admin = requireKey(identity.authenticator, ...KEY_ADMIN_PERMISSIONS);
  const base = IDENTITY_KEYS_PATH;

  router.get(`${base}/usage`, admin, async (req, res) => {
    res.json(await identity.keys.usage(principalOf(req)));
  });

  router.get(base, admin, async (req, res) => {
    res.json(await identity.keys.listKeys(principalOf(req)));
  });

  router.post(base, admin, ...jsonBody(), async (req, res) => {
    const body = parseOr400(createKeyBody, req.body);
    const permissions = [body.issuerPermission, body.verifierPermission].filter((p): p is Permission => Boolean(p));
    res.status(201).json(await identity.keys.createKey(principalOf(req), { name: body.name, permissions }));
  });

  router.delete(`${base}/:id`, admin, async (req, res) => {
    await identity.keys.deleteKey(principalOf(req), String(req.params['id']));
    res.status(204).end();
  });

  router.post(`${base}/:id/revoke`, admin, ...jsonBody(), async (req, res) => {
    const body = parseOr400(revokeKeyBody, req.body);
    res.status(201).json(await identity.keys.revokeKey(principalOf(req), String(req.params['id']), body.isRevoked));
  });

  return router;
}
