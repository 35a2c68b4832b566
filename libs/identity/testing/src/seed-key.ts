import { randomUUID } from 'node:crypto';
import { KeyWriter } from '@proofline/identity-data-access';
import { expiryFor, generateRawKey, hashKey, sortPermissions } from '@proofline/identity-domain';
import type { Permission } from '@proofline/identity-domain';
import type { Redis } from '@proofline/shared-redis';

export interface SeedKeyOptions {
  readonly tenant?: string;
  readonly permissions: readonly Permission[];
  /** Defaults to now; with `lifetimeDays` it decides expiresAt. */
  readonly createdAt?: Date;
  readonly revoked?: boolean;
  readonly name?: string;
}

export interface SeededKey {
  readonly id: string;
  readonly rawKey: string;
  readonly tenant: string;
  readonly permissions: readonly Permission[];
}

/**
 * Writes an identity key straight into the store through the production write script (no key
 * worker, no limit): for auth tests that need keys of given permissions, ages or states.
 */
export async function seedKey(
  redis: Redis,
  store: { readonly prefix: string; readonly lifetimeDays: number },
  opts: SeedKeyOptions,
): Promise<SeededKey> {
  const rawKey = generateRawKey();
  const id = randomUUID();
  const tenant = opts.tenant ?? 'default';
  const permissions = sortPermissions(opts.permissions);
  const createdAt = opts.createdAt ?? new Date();
  const { outcome } = await new KeyWriter(redis, store.prefix).create(
    {
      id,
      tenant,
      name: opts.name ?? 'seeded',
      keyHash: hashKey(rawKey),
      last4: rawKey.slice(-4),
      permissions,
      createdBy: 'test-seed',
      createdAt: createdAt.toISOString(),
      updatedAt: createdAt.toISOString(),
      expiresAt: expiryFor(createdAt, store.lifetimeDays).toISOString(),
      revokedAt: opts.revoked ? createdAt.toISOString() : null,
      source: 'identity',
      legacyId: null,
    },
    { limit: 0, deadlineMs: 0 },
  );
  if (outcome !== 'created') throw new Error(`seedKey: ${outcome}`);
  return { id, rawKey, tenant, permissions };
}
