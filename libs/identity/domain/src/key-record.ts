import { generateRawKey, hashKey, sortPermissions } from './api-key';
import type { ApiKeyRecord, KeyOrigin, Permission } from './api-key';

/**
 * What a key is made from: its raw value (hashed and masked here; the raw value itself is never
 * part of the record), or, when the raw value was never seen (a legacy import by hash, a job
 * that carries the hash only), the stored hash and last four characters.
 */
export type KeySecret = { readonly rawKey: string } | { readonly keyHash: string; readonly last4: string };

export interface KeyRecordInput {
  readonly id: string;
  readonly tenant: string;
  readonly name: string;
  readonly permissions: readonly Permission[];
  readonly createdBy: string;
  /** Dates become ISO 8601; a string is kept as given (already stored or carried in a job). */
  readonly createdAt: Date | string;
  readonly expiresAt: Date | string;
  /** Defaults to createdAt. */
  readonly updatedAt?: Date | string;
  readonly revokedAt?: Date | string | null;
  /** Defaults to 'identity'. */
  readonly origin?: KeyOrigin;
  /** Numeric id of an imported legacy key; only with origin 'legacy'. */
  readonly legacyId?: string | null;
  readonly secret: KeySecret;
}

const iso = (d: Date | string): string => (typeof d === 'string' ? d : d.toISOString());

/**
 * The one constructor of a stored key: hash and mask from the secret, permissions in canonical
 * order, defaults for the fields a new key starts with. Every place that makes a key (the key
 * commands, the key worker, bootstrap, legacy import, test seeds) goes through it.
 */
export function keyRecord(input: KeyRecordInput): ApiKeyRecord {
  const { secret } = input;
  const keyHash = 'rawKey' in secret ? hashKey(secret.rawKey) : secret.keyHash;
  const last4 = 'rawKey' in secret ? secret.rawKey.slice(-4) : secret.last4;
  const createdAt = iso(input.createdAt);
  return {
    id: input.id,
    tenant: input.tenant,
    name: input.name,
    keyHash,
    last4,
    permissions: sortPermissions(input.permissions),
    createdBy: input.createdBy,
    createdAt,
    updatedAt: input.updatedAt !== undefined ? iso(input.updatedAt) : createdAt,
    expiresAt: iso(input.expiresAt),
    revokedAt: input.revokedAt === undefined || input.revokedAt === null ? null : iso(input.revokedAt),
    source: input.origin ?? 'identity',
    legacyId: input.legacyId ?? null,
  };
}

/** A key made now from a fresh raw key (CSPRNG): the record, and the raw key to show once. */
export interface IssuedKey {
  readonly rawKey: string;
  readonly record: ApiKeyRecord;
}

export function issueKey(input: Omit<KeyRecordInput, 'secret'>): IssuedKey {
  const rawKey = generateRawKey();
  return { rawKey, record: keyRecord({ ...input, secret: { rawKey } }) };
}
