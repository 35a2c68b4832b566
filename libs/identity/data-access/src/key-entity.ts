import { Schema } from 'redis-om';
import type { Entity } from 'redis-om';
import { isPermission } from '@proofline/identity-domain';
import type { ApiKeyRecord } from '@proofline/identity-domain';

/**
 * The HASH layout of a key, shared by the redis-om schema (reads) and the Lua scripts (atomic
 * writes). Dates are ISO 8601 strings (redis-om's `date` type would drop milliseconds);
 * permissions are joined with `|`; an absent `revokedAt` / `legacyId` field means null.
 */
export interface KeyEntity extends Entity {
  id?: string;
  tenant?: string;
  name?: string;
  keyHash?: string;
  last4?: string;
  permissions?: string[];
  createdBy?: string;
  createdAt?: string;
  updatedAt?: string;
  expiresAt?: string;
  revokedAt?: string;
  source?: string;
  legacyId?: string;
}

export const PERMISSION_SEPARATOR = '|';

/** The redis-om schema; its name is the key prefix, so entity keys are `${name}:${id}`. */
export function keySchema(entityPrefix: string): Schema<KeyEntity> {
  return new Schema<KeyEntity>(
    entityPrefix,
    {
      id: { type: 'string' },
      tenant: { type: 'string' },
      name: { type: 'string' },
      keyHash: { type: 'string' },
      last4: { type: 'string' },
      permissions: { type: 'string[]', separator: PERMISSION_SEPARATOR },
      createdBy: { type: 'string' },
      createdAt: { type: 'string' },
      updatedAt: { type: 'string' },
      expiresAt: { type: 'string' },
      revokedAt: { type: 'string' },
      source: { type: 'string' },
      legacyId: { type: 'string' },
    },
    { dataStructure: 'HASH' },
  );
}

/** Entity -> record; null for a missing key (redis-om returns an empty entity, not null). */
export function fromEntity(e: KeyEntity): ApiKeyRecord | null {
  if (!e.id || !e.keyHash || !e.tenant || !e.createdAt || !e.expiresAt) return null;
  return {
    id: e.id,
    tenant: e.tenant,
    name: e.name ?? '',
    keyHash: e.keyHash,
    last4: e.last4 ?? '',
    permissions: (e.permissions ?? []).filter(isPermission),
    createdBy: e.createdBy ?? '',
    createdAt: e.createdAt,
    updatedAt: e.updatedAt ?? e.createdAt,
    expiresAt: e.expiresAt,
    revokedAt: e.revokedAt && e.revokedAt.length > 0 ? e.revokedAt : null,
    source: e.source === 'legacy' ? 'legacy' : 'identity',
    legacyId: e.legacyId && e.legacyId.length > 0 ? e.legacyId : null,
  };
}

/** Record -> HASH field/value pairs, exactly as redis-om would write them. */
export function toHashFields(r: ApiKeyRecord): string[] {
  const out = [
    'id',
    r.id,
    'tenant',
    r.tenant,
    'name',
    r.name,
    'keyHash',
    r.keyHash,
    'last4',
    r.last4,
    'permissions',
    r.permissions.join(PERMISSION_SEPARATOR),
    'createdBy',
    r.createdBy,
    'createdAt',
    r.createdAt,
    'updatedAt',
    r.updatedAt,
    'expiresAt',
    r.expiresAt,
    'source',
    r.source,
  ];
  if (r.revokedAt !== null) out.push('revokedAt', r.revokedAt);
  if (r.legacyId !== null) out.push('legacyId', r.legacyId);
  return out;
}
