import { randomUUID } from 'node:crypto';
import { authorize } from '@proofline/identity-feature';
import type { Permission, Principal } from '@proofline/identity-domain';
import type { GraphQLDeps } from './deps';

/** Per-request GraphQL context. A fresh one per request: dataloader caches live in it. */
export interface GraphQLContext {
  readonly requestId: string;
  readonly deps: GraphQLDeps;
  /**
   * Authenticates the request's `x-api-key` exactly as REST does (401 API_KEY_MISSING /
   * API_KEY_INVALID / API_KEY_REVOKED / API_KEY_EXPIRED) and, when permissions are given,
   * requires one of them (403 PERMISSION_DENIED).
   */
  caller(...permissions: Permission[]): Promise<Principal>;
}

export function createContext(deps: GraphQLDeps, headers: { get(name: string): string | null }): GraphQLContext {
  const rawKey = headers.get('x-api-key') ?? undefined;
  return {
    requestId: headers.get('x-request-id') ?? randomUUID(),
    deps,
    caller: (...permissions) => authorize(deps.identity, rawKey, ...permissions),
  };
}
