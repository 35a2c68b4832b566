import { Router } from 'express';
import {
  KEY_ADMIN_PERMISSIONS,
  isLegacyId,
  isUuid,
  legacyCreateBody,
  legacyKeyUuid,
  legacyPatchBody,
} from '@proofline/identity-domain';
import { principalOf, requireKey } from '@proofline/identity-feature';
import { AppError } from '@proofline/shared-errors';
import { jsonBody, parseOr400 } from '@proofline/shared-http';
import type { Identity } from '@proofline/identity-feature';
import type { Clock, Config } from '@proofline/shared-config';
import { z } from 'zod';
import {
  EX_KEY,
  EX_LEGACY,
  EX_RAW_KEY,
  JSON_BODY,
  KEY_ADMIN,
  json,
  jsonRequest,
  legacyIdParam,
  problems,
  retryAfter,
} from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';
import type { Problems } from '../openapi/route';
import { LegacyCreateRequest, LegacyKey, LegacyKeyWithRawKey, LegacyPatchRequest, Usage } from '../openapi/schemas';
import { IDENTITY_KEYS_PATH, keyUsage } from './identity-keys';

export const LEGACY_KEYS_PATH = '/api/v1/psp/product-manager/customer-user-api-keys';

/**
 * Successor of a legacy operation (RFC 8594 `Link: <...>; rel="successor-version"`). Where the
 * key id is known the link is concrete (a numeric id maps to its stable UUID, a UUID is itself);
 * for an unusable id it is the template `{id}`.
 */
export function legacySuccessor(method: string, subPath: string): string {
  const parts = subPath.split('/').filter((p) => p.length > 0);
  if (parts.length === 1 && parts[0] === 'usage') return `${IDENTITY_KEYS_PATH}/usage`;
  if (parts.length === 1 && (method === 'DELETE' || method === 'PATCH')) {
    const raw = decodeURIComponentSafe(parts[0] ?? '');
    const id = isLegacyId(raw) ? legacyKeyUuid(raw) : isUuid(raw) ? raw.toLowerCase() : '{id}';
    return method === 'DELETE' ? `${IDENTITY_KEYS_PATH}/${id}` : `${IDENTITY_KEYS_PATH}/${id}/revoke`;
  }
  return IDENTITY_KEYS_PATH;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Legacy keys answer: 410 after the sunset, on every operation. */
const LEGACY: Problems = {
  410: { codes: ['LEGACY_ENDPOINT_REMOVED'], why: 'The legacy endpoints are removed after LEGACY_SUNSET.' },
};
const LEGACY_ID: Problems = {
  400: {
    codes: ['API_KEY_ID_INVALID', 'API_KEY_MANAGED_BY_IDENTITY'],
    why: 'Not a legacy numeric id, or a UUID: manage identity keys through the identity endpoints.',
  },
  404: { codes: ['API_KEY_NOT_FOUND'], why: 'Unknown key.' },
};

/**
 * Deprecated legacy key endpoints (spec §4.4, §9). Every response, errors included, carries
 * Deprecation, Sunset and Link; from the sunset instant (LEGACY_SUNSET, by the injected clock)
 * every call answers 410 Gone, whatever the key.
 */
export const LEGACY_KEY_ROUTES = routeTable({
  base: LEGACY_KEYS_PATH,
  tag: 'Legacy keys (deprecated)',
  routes: {
    legacyCreateKey: {
      method: 'post',
      path: '',
      security: 'key',
      legacy: true,
      summary: 'Deprecated: use POST /api/v1/auth/identity-api-keys.',
      request: { body: jsonRequest(LegacyCreateRequest, { name: 'old integration' }) },
      responses: {
        '201': json('An identity key (UUID id) in the legacy shape, with rawKey.', LegacyKeyWithRawKey, {
          ...EX_LEGACY,
          id: EX_KEY.id,
          keyMask: EX_KEY.keyMask,
          rawKey: EX_RAW_KEY,
        }),
      },
      errors: problems(
        KEY_ADMIN,
        JSON_BODY,
        { 403: { codes: ['identity_api_key_limit_exceeded'], why: 'The tenant’s key limit is reached.' } },
        {
          503: {
            codes: ['KEY_SERVICE_UNAVAILABLE'],
            why: 'The key worker did not answer in time.',
            headers: retryAfter,
          },
        },
        LEGACY,
      ),
    },
    legacyListKeys: {
      method: 'get',
      path: '',
      security: 'key',
      legacy: true,
      summary: 'Deprecated: use GET /api/v1/auth/identity-api-keys.',
      responses: { '200': json('Keys in the legacy shape.', z.array(LegacyKey), [EX_LEGACY]) },
      errors: problems(KEY_ADMIN, LEGACY),
    },
    legacyUsage: {
      method: 'get',
      path: '/usage',
      security: 'key',
      legacy: true,
      summary: 'Deprecated: use GET /api/v1/auth/identity-api-keys/usage.',
      responses: { '200': json('Usage.', Usage, { used: 2, limit: 5 }) },
      errors: problems(KEY_ADMIN, LEGACY),
    },
    legacyDeleteKey: {
      method: 'delete',
      path: '/{apiKeyId}',
      security: 'key',
      legacy: true,
      summary: 'Deprecated: use DELETE /api/v1/auth/identity-api-keys/{id}.',
      request: { params: [legacyIdParam()] },
      responses: { '204': { description: 'Deleted.' } },
      errors: problems(KEY_ADMIN, LEGACY_ID, LEGACY),
    },
    legacyUpdateKeyStatus: {
      method: 'patch',
      path: '/{apiKeyId}',
      security: 'key',
      legacy: true,
      summary: 'Deprecated: use POST /api/v1/auth/identity-api-keys/{id}/revoke.',
      request: { params: [legacyIdParam()], body: jsonRequest(LegacyPatchRequest, { status: 'Disabled' }) },
      responses: {
        '200': json('The updated key in the legacy shape.', LegacyKey, { ...EX_LEGACY, status: 'Disabled' }),
      },
      errors: problems(
        KEY_ADMIN,
        JSON_BODY,
        {
          400: {
            codes: ['API_KEY_ID_INVALID', 'API_KEY_MANAGED_BY_IDENTITY'],
            why: 'Not a legacy numeric id, or a UUID.',
          },
          404: { codes: ['API_KEY_NOT_FOUND'], why: 'Unknown key.' },
        },
        LEGACY,
      ),
    },
  },
});

export function legacyKeyRoutes(identity: Identity, config: Pick<Config, 'legacySunset'>, clock: Clock): Router {
  const admin = requireKey(identity.authenticator, ...KEY_ADMIN_PERMISSIONS);
  const sunset = config.legacySunset;

  // Before the routes, for every path under the base (an unknown one's 404 carries the headers too).
  const router = Router();
  router.use((req, res, next) => {
    res.setHeader('Deprecation', 'true');
    res.setHeader('Sunset', sunset.toUTCString());
    res.setHeader('Link', `<${legacySuccessor(req.method, req.path)}>; rel="successor-version"`);
    if (clock.now().getTime() >= sunset.getTime()) {
      next(
        new AppError({
          errorCode: 'LEGACY_ENDPOINT_REMOVED',
          httpStatus: 410,
          detail: `This legacy endpoint was removed on ${sunset.toUTCString()}. Use the identity API key endpoints (${IDENTITY_KEYS_PATH}).`,
        }),
      );
      return;
    }
    next();
  });

  return mountRoutes(
    LEGACY_KEY_ROUTES,
    {
      legacyUsage: [admin, keyUsage(identity)],
      legacyListKeys: [
        admin,
        async (req, res) => {
          res.json(await identity.legacy.list(principalOf(req)));
        },
      ],
      legacyCreateKey: [
        admin,
        ...jsonBody(),
        async (req, res) => {
          const body = parseOr400(legacyCreateBody, req.body);
          res.status(201).json(await identity.legacy.create(principalOf(req), body.name));
        },
      ],
      legacyDeleteKey: [
        admin,
        async (req, res) => {
          await identity.legacy.delete(principalOf(req), String(req.params['apiKeyId']));
          res.status(204).end();
        },
      ],
      legacyUpdateKeyStatus: [
        admin,
        ...jsonBody(),
        async (req, res) => {
          const target = String(req.params['apiKeyId']);
          identity.legacy.target(target); // an unusable id is a 400 before the body is judged
          const body = parseOr400(legacyPatchBody, req.body);
          res.json(await identity.legacy.patch(principalOf(req), target, body.status));
        },
      ],
    },
    router,
  );
}
