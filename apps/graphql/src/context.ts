import { randomUUID } from 'node:crypto';
import { authorize } from '@proofline/identity-feature';
import type { Permission, Principal } from '@proofline/identity-domain';
import type { RecordMeta } from '@proofline/records-domain';
import type { Confirmation } from '@proofline/records-feature';
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
  /**
   * What a `chain` page read in bulk for its nodes (schema/records.ts): their fields resolve from
   * here synchronously, without one loader promise per field; anything absent goes through the
   * batched loaders as before.
   */
  readonly prefetched: Prefetched;
}

export interface Prefetched {
  readonly meta: Map<string, RecordMeta>;
  readonly content: Map<string, Buffer>;
  readonly confirmation: Map<string, Confirmation | null>;
}

export function createContext(deps: GraphQLDeps, headers: { get(name: string): string | null }): GraphQLContext {
  const rawKey = headers.get('x-api-key') ?? undefined;
  return {
    requestId: headers.get('x-request-id') ?? randomUUID(),
    deps,
    caller: (...permissions) => authorize(deps.identity.authenticator, rawKey, ...permissions),
    prefetched: { meta: new Map(), content: new Map(), confirmation: new Map() },
  };
}
