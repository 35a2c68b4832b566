import type { Router } from 'express';
import { principalOf, requireKey } from '@proofline/identity-feature';
import type { Identity } from '@proofline/identity-feature';
import { jsonBody } from '@proofline/shared-http';
import type { WebhookAdmin } from '@proofline/webhooks-feature';
import { EX_TX, JSON_BODY, KEY_AUTH, json, jsonRequest, permission, problems } from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';
import type { Param, Problems } from '../openapi/route';
import { CreateWebhookRequest, CreatedWebhook, DeliveryAttempt, Webhook } from '../openapi/schemas';
import { z } from 'zod';

export const WEBHOOKS_PATH = '/api/v1/webhooks';

const WEBHOOK_ADMIN = problems(KEY_AUTH, permission('Issuer_Admin'));
const WEBHOOK_ID: Problems = {
  400: { codes: ['WEBHOOK_ID_INVALID'], why: 'The id is not a UUID.' },
  404: { codes: ['WEBHOOK_NOT_FOUND'], why: 'No such webhook for this tenant.' },
};
const EX_WEBHOOK = {
  id: '3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c',
  url: 'https://hooks.example.com/proofline',
  events: ['record.confirmed', 'record.failed'],
  createdAt: '2026-11-23T10:00:00.000Z',
};
const webhookIdParam = (): Param => ({
  name: 'id',
  description: 'The webhook id (UUID).',
  schema: { type: 'string', format: 'uuid' },
  example: EX_WEBHOOK.id,
});

/** `/api/v1/webhooks`: a tenant's webhooks and their deliveries. Issuer_Admin only. */
export const WEBHOOK_ROUTES = routeTable({
  base: WEBHOOKS_PATH,
  tag: 'Webhooks',
  routes: {
    createWebhook: {
      method: 'post',
      path: '',
      security: 'key',
      summary: 'Register a webhook; its signing secret is shown only in this answer.',
      request: {
        body: jsonRequest(CreateWebhookRequest, {
          url: 'https://hooks.example.com/proofline',
          events: ['record.confirmed', 'record.failed'],
        }),
      },
      responses: {
        '201': json('Created.', CreatedWebhook, {
          ...EX_WEBHOOK,
          secret: 'whsec_' + Buffer.alloc(32, 7).toString('base64'),
        }),
      },
      errors: problems(
        WEBHOOK_ADMIN,
        JSON_BODY,
        {
          400: {
            codes: ['WEBHOOK_URL_INVALID', 'WEBHOOK_URL_NOT_ALLOWED'],
            why: 'Not an http(s) URL, or one resolving to a loopback, private, link-local or metadata address (unless WEBHOOK_ALLOW_PRIVATE=true).',
          },
        },
        { 409: { codes: ['WEBHOOK_LIMIT_EXCEEDED'], why: 'The tenant has WEBHOOK_LIMIT webhooks.' } },
      ),
    },
    listWebhooks: {
      method: 'get',
      path: '',
      security: 'key',
      summary: "The tenant's webhooks, oldest first.",
      responses: { '200': json('Webhooks.', z.array(Webhook), [EX_WEBHOOK]) },
      errors: WEBHOOK_ADMIN,
    },
    deleteWebhook: {
      method: 'delete',
      path: '/{id}',
      security: 'key',
      summary: 'Delete a webhook and its delivery log.',
      request: { params: [webhookIdParam()] },
      responses: { '204': { description: 'Deleted.' } },
      errors: problems(WEBHOOK_ADMIN, WEBHOOK_ID),
    },
    webhookDeliveries: {
      method: 'get',
      path: '/{id}/deliveries',
      security: 'key',
      summary: 'The latest delivery attempts, newest first.',
      request: { params: [webhookIdParam()] },
      responses: {
        '200': json('Attempts.', z.array(DeliveryAttempt), [
          {
            messageId: 'msg_' + EX_TX.slice(0, 24),
            event: 'record.confirmed',
            txId: EX_TX,
            attempt: 1,
            at: '2026-11-23T10:15:02.000Z',
            statusCode: 200,
            durationMs: 41,
            error: null,
            delivered: true,
          },
        ]),
      },
      errors: problems(WEBHOOK_ADMIN, WEBHOOK_ID),
    },
  },
});

export function webhookRoutes(admin: WebhookAdmin, identity: Pick<Identity, 'authenticator'>): Router {
  const issuerAdmin = requireKey(identity.authenticator, 'Issuer_Admin');
  return mountRoutes(WEBHOOK_ROUTES, {
    createWebhook: [
      issuerAdmin,
      ...jsonBody(),
      async (req, res) => {
        res.status(201).json(await admin.create(principalOf(req).tenant, req.body));
      },
    ],
    listWebhooks: [
      issuerAdmin,
      async (req, res) => {
        res.status(200).json(await admin.list(principalOf(req).tenant));
      },
    ],
    deleteWebhook: [
      issuerAdmin,
      async (req, res) => {
        await admin.delete(principalOf(req).tenant, req.params['id']);
        res.status(204).end();
      },
    ],
    webhookDeliveries: [
      issuerAdmin,
      async (req, res) => {
        res.status(200).json(await admin.deliveries(principalOf(req).tenant, req.params['id']));
      },
    ],
  });
}
