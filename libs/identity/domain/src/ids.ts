import { createHash } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LEGACY_ID = /^[1-9][0-9]{0,15}$/;

/** Fixed namespace of the legacy-id -> UUID mapping. MUST NOT change: stored keys depend on it. */
export const LEGACY_KEY_NAMESPACE = '5b0c7a4e-2f7d-4c1e-9a35-7d1e8f0b6c21';
/** Fixed namespace of bootstrap key ids (derived from the key hash, so registration is idempotent). */
export const BOOTSTRAP_KEY_NAMESPACE = 'c3e1f0a2-6b8d-4e57-8f19-2a4d6c8e0b13';

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** A legacy key id: a positive integer of at most 16 digits, written without leading zeros. */
export function isLegacyId(value: string): boolean {
  return LEGACY_ID.test(value);
}

/** RFC 4122 version 5 (SHA-1, name-based) UUID. */
export function uuidV5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const bytes = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The stable identity-side UUID of a legacy numeric key id. */
export function legacyKeyUuid(legacyId: string | number): string {
  return uuidV5(`legacy-key:${String(legacyId)}`, LEGACY_KEY_NAMESPACE);
}

/** The id a bootstrap key is registered under (same hash, same id: registration is idempotent). */
export function bootstrapKeyUuid(keyHash: string): string {
  return uuidV5(`bootstrap-key:${keyHash}`, BOOTSTRAP_KEY_NAMESPACE);
}

/** Tenants appear in Redis keys, so they are restricted to a safe alphabet. */
export const TENANT_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const DEFAULT_TENANT = 'default';
