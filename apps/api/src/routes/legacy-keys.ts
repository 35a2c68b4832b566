import { Router } from 'express';
import type { RequestHandler } from 'express';
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
import { IDENTITY_KEYS_PATH } from './identity-keys';

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

/**
 * Deprecated legacy key endpoints (spec §4.4, §9). Every response, errors included, carries
 * Deprecation, Sunset and Link; from the sunset instant (LEGACY_SUNSET, by the injected clock)
 * every call answers 410 Gone, whatever the key.
 */
export function legacyKeyRoutes(identity: Identity, config: Pick<Config, 'legacySunset'>, clock: Clock): Router {
  const router = Router();
  const admin = requireKey(identity.authenticator, ...KEY_ADMIN_PERMISSIONS);
  const sunset = config.legacySunset;

  const deprecation: RequestHandler = (req, res, next) => {
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
  };
  router.use(LEGACY_KEYS_PATH, deprecation);

  router.get(`${LEGACY_KEYS_PATH}/usage`, admin, async (req, res) => {
    res.json(await identity.keys.usage(principalOf(req)));
  });

  router.get(LEGACY_KEYS_PATH, admin, async (req, res) => {
    res.json(await identity.legacy.list(principalOf(req)));
  });

  router.post(LEGACY_KEYS_PATH, admin, ...jsonBody(), async (req, res) => {
    const body = parseOr400(legacyCreateBody, req.body);
    res.status(201).json(await identity.legacy.create(principalOf(req), body.name));
  });

  router.delete(`${LEGACY_KEYS_PATH}/:apiKeyId`, admin, async (req, res) => {
    await identity.legacy.delete(principalOf(req), String(req.params['apiKeyId']));
    res.status(204).end();
  });

  router.patch(`${LEGACY_KEYS_PATH}/:apiKeyId`, admin, ...jsonBody(), async (req, res) => {
    const target = String(req.params['apiKeyId']);
    identity.legacy.target(target); // an unusable id is a 400 before the body is judged
    const body = parseOr400(legacyPatchBody, req.body);
    res.json(await identity.legacy.patch(principalOf(req), target, body.status));
  });

  return router;
}
