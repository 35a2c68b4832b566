import { AppError, badRequest, forbidden, notFound, unauthorized, unavailable } from '@proofline/shared-errors';

/** The errors of the identity feature, with the codes DESIGN.md and the spec fix. */
export const identityErrors = {
  keyMissing: () => unauthorized('API_KEY_MISSING', 'Send an identity API key in the x-api-key header.'),
  keyInvalid: () => unauthorized('API_KEY_INVALID', 'The API key is not valid.'),
  keyRevoked: () => unauthorized('API_KEY_REVOKED', 'The API key has been revoked.'),
  keyExpired: () => unauthorized('API_KEY_EXPIRED', 'The API key has expired.'),
  permissionDenied: (required: readonly string[]) =>
    forbidden('PERMISSION_DENIED', `This operation needs a key with one of these permissions: ${required.join(', ')}.`),
  escalation: (what: string) =>
    forbidden(
      'identity_api_key_privilege_escalation',
      `${what}: a permission may not outrank the calling key's own on either side (Admin 3 > User 2 > Auditor 1).`,
    ),
  limitExceeded: (limit: number) =>
    forbidden(
      'identity_api_key_limit_exceeded',
      `The key limit of ${limit} keys is reached (identity and legacy keys, revoked and expired included). Delete a key first.`,
    ),
  idInvalid: (id: string) =>
    badRequest('API_KEY_ID_INVALID', `The key id ${JSON.stringify(id.slice(0, 64))} is not a UUID.`),
  legacyIdInvalid: (id: string) =>
    badRequest(
      'API_KEY_ID_INVALID',
      `The legacy key id ${JSON.stringify(id.slice(0, 64))} is not a legacy numeric id.`,
    ),
  managedByIdentity: (id: string) =>
    new AppError({
      errorCode: 'API_KEY_MANAGED_BY_IDENTITY',
      httpStatus: 400,
      detail: `Key ${id} is managed by the identity API key system and must be managed through the identity API key endpoints (/api/v1/auth/identity-api-keys).`,
    }),
  notFound: (id: string) => notFound('API_KEY_NOT_FOUND', `No API key ${id} exists.`),
  serviceUnavailable: (cause?: unknown) =>
    unavailable(
      'KEY_SERVICE_UNAVAILABLE',
      'The key service could not complete the request in time; nothing was created. Try again.',
      2,
      cause,
    ),
  storeUnavailable: (cause?: unknown) =>
    unavailable('STORE_UNAVAILABLE', 'The key store is unavailable. Try again.', 1, cause),
};
