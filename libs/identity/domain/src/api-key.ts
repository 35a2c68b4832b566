import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/*
 * An API key: the permissions it may hold and their ranks, its raw form (`idty_…`, or an
 * imported legacy shape), the hash it is stored and looked up by, the stored record, and the
 * checks and views of that record.
 */

/** The six key permissions, per side. Values are case-sensitive. */
export const ISSUER_PERMISSIONS = ['Issuer_Admin', 'Issuer_User', 'Issuer_Auditor'] as const;
export const VERIFIER_PERMISSIONS = ['Verifier_Admin', 'Verifier_User', 'Verifier_Auditor'] as const;
export const PERMISSIONS = [...ISSUER_PERMISSIONS, ...VERIFIER_PERMISSIONS] as const;

export type Permission = (typeof PERMISSIONS)[number];
export type Side = 'issuer' | 'verifier';

/** Permissions that may manage keys (spec §5.2). */
export const KEY_ADMIN_PERMISSIONS: readonly Permission[] = ['Issuer_Admin', 'Verifier_Admin'];

const RANK: Readonly<Record<string, number>> = { Admin: 3, User: 2, Auditor: 1 };

export function isPermission(value: unknown): value is Permission {
  return typeof value === 'string' && (PERMISSIONS as readonly string[]).includes(value);
}

/** Side and rank (Admin 3, User 2, Auditor 1) of one permission. */
export function parsePermission(p: Permission): { side: Side; rank: number } {
  const [side, level] = p.split('_') as [string, string];
  return { side: side === 'Issuer' ? 'issuer' : 'verifier', rank: RANK[level] ?? 0 };
}

/** Highest rank a permission set holds on one side; a side it lacks is rank 0. */
export function rankOn(permissions: readonly Permission[], side: Side): number {
  let best = 0;
  for (const p of permissions) {
    const parsed = parsePermission(p);
    if (parsed.side === side && parsed.rank > best) best = parsed.rank;
  }
  return best;
}

/**
 * True when `target` outranks `holder` on either side, i.e. a key holding `holder` may not
 * create (or revoke, or delete) a key holding `target`.
 */
export function outranks(target: readonly Permission[], holder: readonly Permission[]): boolean {
  return (['issuer', 'verifier'] as const).some((side) => rankOn(target, side) > rankOn(holder, side));
}

/** True when `held` contains at least one of `required` (an empty `required` means any valid key). */
export function hasAnyPermission(held: readonly Permission[], required: readonly Permission[]): boolean {
  return required.length === 0 || required.some((p) => held.includes(p));
}

/** Canonical order (issuer side first), no duplicates. */
export function sortPermissions(permissions: readonly Permission[]): Permission[] {
  return PERMISSIONS.filter((p) => permissions.includes(p));
}

/** `idty_` followed by 32 letters or digits. */
export const IDENTITY_KEY_PATTERN = /^idty_[A-Za-z0-9]{32}$/;
/**
 * Imported legacy raw keys may have another shape: 16 to 128 characters of letters, digits and
 * `._-`. Anything else in `x-api-key` is malformed and refused before Redis is asked.
 */
export const LEGACY_KEY_PATTERN = /^[A-Za-z0-9._-]{16,128}$/;
export const KEY_PREFIX = 'idty_';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Largest multiple of 62 that fits a byte: bytes at or above it are rejected (no modulo bias). */
const ACCEPT_BELOW = 256 - (256 % ALPHABET.length);

/** A new raw identity key from the CSPRNG: `idty_` + 32 characters, ~190 bits of entropy. */
export function generateRawKey(): string {
  let out = KEY_PREFIX;
  while (out.length < KEY_PREFIX.length + 32) {
    for (const byte of randomBytes(48)) {
      if (byte >= ACCEPT_BELOW) continue;
      out += ALPHABET[byte % ALPHABET.length];
      if (out.length === KEY_PREFIX.length + 32) break;
    }
  }
  return out;
}

/**
 * The stored form of a key: SHA-256, lowercase hex. A fast hash is the right choice here (not a
 * password KDF): the key is ~190 random bits, so brute force is hopeless whatever the hash cost,
 * and every authenticated request pays for it.
 */
export function hashKey(rawKey: string): string {
  return hash('sha256', rawKey, 'hex');
}

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** True when `value` has the shape of a key the service could know (identity or legacy). */
export function isWellFormedKey(value: string): boolean {
  return IDENTITY_KEY_PATTERN.test(value) || LEGACY_KEY_PATTERN.test(value);
}

/** `idty_` + 28 `*` + the last 4 characters (`****` when the raw key was never seen). */
export function keyMask(last4: string): string {
  return `${KEY_PREFIX}${'*'.repeat(28)}${last4.length === 4 ? last4 : '****'}`;
}

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
