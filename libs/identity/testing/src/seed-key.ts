import { randomUUID } from 'node:crypto';
import { KeyWriter } from '@proofline/identity-data-access';
import { expiryFor, issueKey } from '@proofline/identity-domain';
import type { Permission } from '@proofline/identity-domain';
import type { RedisClient } from '@proofline/shared-redis';

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
  redis: RedisClient,
  store: { readonly prefix: string; readonly lifetimeDays: number },
  opts: SeedKeyOptions,
): Promise<SeededKey> {
  const createdAt = opts.createdAt ?? new Date();
  const { rawKey, record } = issueKey({
    id: randomUUID(),
    tenant: opts.tenant ?? 'default',
    name: opts.name ?? 'seeded',
    permissions: opts.permissions,
    createdBy: 'test-seed',
    createdAt,
    expiresAt: expiryFor(createdAt, store.lifetimeDays),
    revokedAt: opts.revoked ? createdAt : null,
  });
  const { outcome } = await new KeyWriter(redis, store.prefix).create(record, { limit: 0, deadlineMs: 0 });
  if (outcome !== 'created') throw new Error(`seedKey: ${outcome}`);
  return { id: record.id, rawKey, tenant: record.tenant, permissions: record.permissions };
}
