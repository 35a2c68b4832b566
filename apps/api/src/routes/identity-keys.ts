import type { RequestHandler, Router } from 'express';
import { z } from 'zod';
import { KEY_ADMIN_PERMISSIONS, createKeyBody, revokeKeyBody } from '@proofline/identity-domain';
import type { Permission } from '@proofline/identity-domain';
import { principalOf, requireKey } from '@proofline/identity-feature';
import { jsonBody, parseOr400 } from '@proofline/shared-http';
import type { Identity } from '@proofline/identity-feature';
import {
  ESCALATION,
  EX_KEY,
  EX_RAW_KEY,
  JSON_BODY,
  KEY_ADMIN,
  KEY_ID,
  json,
  jsonRequest,
  keyIdParam,
  problems,
  retryAfter,
} from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';
import { CreateKeyRequest, IdentityApiKey, IdentityApiKeyWithRawKey, RevokeRequest, Usage } from '../openapi/schemas';

export const IDENTITY_KEYS_PATH = '/api/v1/auth/identity-api-keys';

/** Identity API key endpoints (spec §4.3). Every call needs Issuer_Admin or Verifier_Admin. */
export const IDENTITY_KEY_ROUTES = routeTable({
  base: IDENTITY_KEYS_PATH,
  tag: 'Identity API keys',
  routes: {
    createIdentityApiKey: {
      method: 'post',
      path: '',
      security: 'key',
      summary: 'Create a key; the raw key is returned only here.',
      request: { body: jsonRequest(CreateKeyRequest, { name: 'ci-pipeline', issuerPermission: 'Issuer_User' }) },
      responses: { '201': json('Created.', IdentityApiKeyWithRawKey, { ...EX_KEY, rawKey: EX_RAW_KEY }) },
      errors: problems(
        KEY_ADMIN,
        JSON_BODY,
        ESCALATION,
        { 403: { codes: ['identity_api_key_limit_exceeded'], why: 'The tenant’s key limit (KEY_LIMIT) is reached.' } },
        {
          503: {
            codes: ['KEY_SERVICE_UNAVAILABLE'],
            why: 'The key worker did not answer in time; nothing was created.',
            headers: retryAfter,
          },
        },
      ),
    },
    listIdentityApiKeys: {
      method: 'get',
      path: '',
      security: 'key',
      summary: "The tenant's keys, newest first, legacy keys mapped in.",
      responses: { '200': json('Keys.', z.array(IdentityApiKey), [EX_KEY]) },
      errors: KEY_ADMIN,
    },
    identityApiKeyUsage: {
      method: 'get',
      path: '/usage',
      security: 'key',
      summary: 'Keys used and the shared limit.',
      responses: { '200': json('Usage.', Usage, { used: 2, limit: 5 }) },
      errors: KEY_ADMIN,
    },
    deleteIdentityApiKey: {
      method: 'delete',
      path: '/{id}',
      security: 'key',
      summary: 'Delete a key (frees its slot).',
      request: { params: [keyIdParam()] },
      responses: { '204': { description: 'Deleted.' } },
      errors: problems(KEY_ADMIN, KEY_ID, ESCALATION),
    },
    revokeIdentityApiKey: {
      method: 'post',
      path: '/{id}/revoke',
      security: 'key',
      summary: 'Revoke (isRevoked true) or re-activate (false); idempotent.',
      request: { params: [keyIdParam()], body: jsonRequest(RevokeRequest, { isRevoked: true }) },
      responses: {
        '201': json('The updated key.', IdentityApiKey, {
          ...EX_KEY,
          revokedAt: '2026-11-23T11:00:00.000Z',
          updatedAt: '2026-11-23T11:00:00.000Z',
        }),
      },
      errors: problems(KEY_ADMIN, KEY_ID, JSON_BODY, ESCALATION),
    },
  },
});

/** The caller's tenant's key usage: identity and legacy keys count against one limit, so both families answer it. */
export function keyUsage(identity: Pick<Identity, 'keys'>): RequestHandler {
  return async (req, res) => {
    res.json(await identity.keys.usage(principalOf(req)));
  };
}

export function identityKeyRoutes(identity: Pick<Identity, 'authenticator' | 'keys'>): Router {
  const admin = requireKey(identity.authenticator, ...KEY_ADMIN_PERMISSIONS);
  return mountRoutes(IDENTITY_KEY_ROUTES, {
    identityApiKeyUsage: [admin, keyUsage(identity)],
    listIdentityApiKeys: [
      admin,
      async (req, res) => {
        res.json(await identity.keys.listKeys(principalOf(req)));
      },
    ],
    createIdentityApiKey: [
      admin,
      ...jsonBody(),
      async (req, res) => {
        const body = parseOr400(createKeyBody, req.body);
        const permissions = [body.issuerPermission, body.verifierPermission].filter((p): p is Permission => Boolean(p));
        res.status(201).json(await identity.keys.createKey(principalOf(req), { name: body.name, permissions }));
      },
    ],
    deleteIdentityApiKey: [
      admin,
      async (req, res) => {
        await identity.keys.deleteKey(principalOf(req), String(req.params['id']));
        res.status(204).end();
      },
    ],
    revokeIdentityApiKey: [
      admin,
      ...jsonBody(),
      async (req, res) => {
        const body = parseOr400(revokeKeyBody, req.body);
        res.status(201).json(await identity.keys.revokeKey(principalOf(req), String(req.params['id']), body.isRevoked));
      },
    ],
  });
}
