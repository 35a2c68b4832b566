import { Router } from 'express';
import { principalOf, requireKey } from '@proofline/identity-feature';
import type { Identity } from '@proofline/identity-feature';
import { jsonBody } from '@proofline/shared-http';
import type { WebhookAdmin } from '@proofline/webhooks-feature';

export const WEBHOOKS_PATH = '/api/v1/webhooks';

/** `/api/v1/webhooks` (issue 11): a tenant's webhooks and their deliveries. Issuer_Admin only. */
export function webhookRoutes(admin: WebhookAdmin, identity: Pick<Identity, 'authenticator'>): Router {
  const router = Router();
  const issuerAdmin = requireKey(identity.authenticator, 'Issuer_Admin');
  const base = WEBHOOKS_PATH;

  router.post(base, issuerAdmin, ...jsonBody(), async (req, res) => {
    res.status(201).json(await admin.create(principalOf(req).tenant, req.body));
  });

  router.get(base, issuerAdmin, async (req, res) => {
    res.status(200).json(await admin.list(principalOf(req).tenant));
  });

  router.delete(`${base}/:id`, issuerAdmin, async (req, res) => {
    await admin.delete(principalOf(req).tenant, req.params['id']);
    res.status(204).end();
  });

  router.get(`${base}/:id/deliveries`, issuerAdmin, async (req, res) => {
    res.status(200).json(await admin.deliveries(principalOf(req).tenant, req.params['id']));
  });

  return router;
}
