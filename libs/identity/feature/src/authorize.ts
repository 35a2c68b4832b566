import { hasAnyPermission } from '@proofline/identity-domain';
import type { IdentityApiKey, Permission, Principal } from '@proofline/identity-domain';
import { identityErrors as E } from './errors';
import type { Authenticator } from './authenticator';
import type { KeyCommands } from './key-commands';

/**
 * Transport-neutral `x-api-key` check, shared by the REST middleware ({@link requireKey}) and
 * GraphQL resolvers: authenticates `rawKey` (401 API_KEY_MISSING / API_KEY_INVALID /
 * API_KEY_REVOKED / API_KEY_EXPIRED) and, when `permissions` are given, requires one of them
 * (403 PERMISSION_DENIED). With no permissions any valid key passes.
 *
 * @example const principal = await authorize(identity.authenticator, headers.get('x-api-key') ?? undefined, ...KEY_ADMIN_PERMISSIONS);
 */
export async function authorize(
  authenticator: Pick<Authenticator, 'authenticate'>,
  rawKey: string | undefined,
  ...permissions: Permission[]
): Promise<Principal> {
  const principal = await authenticator.authenticate(rawKey);
  if (!hasAnyPermission(principal.permissions, permissions)) throw E.permissionDenied(permissions);
  return principal;
}

/**
 * The calling key's own resource (never its raw value), for "who am I" queries: any valid key
 * may read itself. 404 API_KEY_NOT_FOUND if it was deleted since it authenticated.
 */
export async function callerKey(keys: Pick<KeyCommands, 'listKeys'>, principal: Principal): Promise<IdentityApiKey> {
  const own = (await keys.listKeys(principal)).find((k) => k.id === principal.keyId);
  if (!own) throw E.notFound(principal.keyId);
  return own;
}
