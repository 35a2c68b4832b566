import { keyMask } from './key-material';
import type { Permission } from './permissions';

/**
 * Where a key came from: issued by this service, or imported from the legacy system (stored as
 * the record's `source` field). Not to be confused with the claims lib's `SigningKeySource`.
 */
export type KeyOrigin = 'identity' | 'legacy';

/** A stored key (what the HASH holds). Never contains the raw key. */
export interface ApiKeyRecord {
  readonly id: string;
  readonly tenant: string;
  readonly name: string;
  readonly keyHash: string;
  readonly last4: string;
  readonly permissions: readonly Permission[];
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly expiresAt: string;
  readonly revokedAt: string | null;
  readonly source: KeyOrigin;
  /** Numeric id of an imported legacy key (as a string); null for identity keys. */
  readonly legacyId: string | null;
}

/** The identity API key resource (spec §2.10) without rawKey. */
export interface IdentityApiKey {
  id: string;
  name: string;
  keyMask: string;
  permissions: Permission[];
  expiresAt: string;
  revokedAt: string | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

/** Legacy list item shape (numeric id for imported legacy keys, UUID for identity keys). */
export interface LegacyApiKey {
  id: number | string;
  name: string;
  status: 'Active' | 'Disabled';
  createdAt: string;
  expiresAt: string;
  keyMask: string;
  permissions: Permission[];
}

/** Who is calling: the result of authenticating `x-api-key`. */
export interface Principal {
  readonly keyId: string;
  readonly tenant: string;
  readonly permissions: readonly Permission[];
  readonly source: KeyOrigin;
}

export function toIdentityApiKey(r: ApiKeyRecord): IdentityApiKey {
  return {
    id: r.id,
    name: r.name,
    keyMask: keyMask(r.last4),
    permissions: [...r.permissions],
    expiresAt: r.expiresAt,
    revokedAt: r.revokedAt,
    createdBy: r.createdBy,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export function toLegacyApiKey(r: ApiKeyRecord): LegacyApiKey {
  return {
    id: r.legacyId !== null ? Number(r.legacyId) : r.id,
    name: r.name,
    status: r.revokedAt === null ? 'Active' : 'Disabled',
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    keyMask: keyMask(r.last4),
    permissions: [...r.permissions],
  };
}

/** Newest first: createdAt descending, then id ascending (a total, stable order). */
export function newestFirst(a: ApiKeyRecord, b: ApiKeyRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Why a key authenticates nothing (expected outcomes are data, not exceptions). */
export type KeyCheck = { valid: true } | { valid: false; code: 'REVOKED' | 'EXPIRED' };

export function checkKey(r: Pick<ApiKeyRecord, 'revokedAt' | 'expiresAt'>, now: Date): KeyCheck {
  if (r.revokedAt !== null) return { valid: false, code: 'REVOKED' };
  if (now.getTime() >= Date.parse(r.expiresAt)) return { valid: false, code: 'EXPIRED' };
  return { valid: true };
}

/** expiresAt = createdAt + lifetimeDays days. */
export function expiryFor(createdAt: Date, lifetimeDays: number): Date {
  return new Date(createdAt.getTime() + lifetimeDays * 86_400_000);
}
