import {
  DEFAULT_TENANT,
  IDENTITY_KEY_PATTERN,
  KEY_ADMIN_PERMISSIONS,
  TENANT_PATTERN,
  bootstrapKeyUuid,
  expiryFor,
  generateRawKey,
  hashKey,
  keyRecord,
  legacyImportFile,
  legacyKeyUuid,
} from '@proofline/identity-domain';
import type { Permission } from '@proofline/identity-domain';
import { KeyWriter } from '@proofline/identity-data-access';
import { systemClock } from '@proofline/shared-config';
import type { Clock, Config } from '@proofline/shared-config';
import { badRequest } from '@proofline/shared-errors';
import type { RedisClient } from '@proofline/shared-redis';

/** What the administrative functions (CLI, API start) need. */
export interface IdentityAdminDeps {
  /** Any ioredis connection; the Lua commands are defined on it. Not closed here. */
  readonly redis: RedisClient;
  readonly config: Pick<Config, 'redisPrefix' | 'keyLifetimeDays'>;
  readonly clock?: Clock;
}

function checkTenant(tenant: string): string {
  if (!TENANT_PATTERN.test(tenant))
    throw badRequest('TENANT_INVALID', 'A tenant is 1 to 64 characters of A-Z a-z 0-9 _ -.');
  return tenant;
}

/**
 * Registers `rawKey` (an `idty_` key) as an admin key (Issuer_Admin + Verifier_Admin) of
 * `tenant` (default `default`). Idempotent by hash: a key already registered is left as it is.
 * Not subject to the key limit (it still counts toward usage). The key expires like any other,
 * KEY_LIFETIME_DAYS after its first registration.
 * Throws AppError 400 when the raw key or tenant is malformed.
 */
export async function registerBootstrapKey(
  deps: IdentityAdminDeps,
  rawKey: string,
  opts: { tenant?: string } = {},
): Promise<{ id: string; tenant: string; created: boolean }> {
  if (!IDENTITY_KEY_PATTERN.test(rawKey))
    throw badRequest('API_KEY_INVALID', 'A bootstrap key must be idty_ followed by 32 letters or digits.');
  const tenant = checkTenant(opts.tenant ?? DEFAULT_TENANT);
  const writer = new KeyWriter(deps.redis, deps.config.redisPrefix);
  const keyHash = hashKey(rawKey);
  const existing = await writer.idByHash(keyHash);
  if (existing) return { id: existing, tenant, created: false };
  const now = (deps.clock ?? systemClock).now();
  const record = keyRecord({
    id: bootstrapKeyUuid(keyHash),
    tenant,
    name: 'bootstrap',
    permissions: KEY_ADMIN_PERMISSIONS,
    createdBy: 'bootstrap',
    createdAt: now,
    expiresAt: expiryFor(now, deps.config.keyLifetimeDays),
    secret: { rawKey },
  });
  const { outcome, id } = await writer.create(record, { limit: 0, deadlineMs: 0 });
  return { id, tenant, created: outcome === 'created' };
}

/** Generates a new admin key for `tenant`, registers it and returns the raw key (shown once). */
export async function createBootstrapKey(deps: IdentityAdminDeps, tenant: string = DEFAULT_TENANT): Promise<string> {
  const rawKey = generateRawKey();
  await registerBootstrapKey(deps, rawKey, { tenant });
  return rawKey;
}

export interface LegacyImportReport {
  /** Items in the file. */
  total: number;
  /** Newly stored. */
  imported: number;
  /** Already imported before (same numeric id and hash): left unchanged. */
  skipped: number;
  /** Numeric ids refused because their id or key hash already belongs to another key. */
  conflicts: number[];
}

/**
 * Imports legacy keys (numeric ids) into `tenant` (default `default`). Items are validated with
 * zod first (AppError 400 VALIDATION_FAILED naming the item and field; nothing is written then).
 * Idempotent by numeric id; not subject to the key limit (the keys already exist; they count
 * toward usage). Missing permissions -> ['Issuer_User']; missing expiresAt -> import time +
 * KEY_LIFETIME_DAYS; status Disabled -> revoked at import time.
 */
export async function importLegacyKeys(
  deps: IdentityAdminDeps,
  items: unknown,
  opts: { tenant?: string } = {},
): Promise<LegacyImportReport> {
  const tenant = checkTenant(opts.tenant ?? DEFAULT_TENANT);
  const parsed = legacyImportFile.safeParse(items);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .slice(0, 5)
      .map((i) => (i.path.length > 0 ? `item ${i.path.map(String).join('.')}: ${i.message}` : i.message))
      .join('; ');
    throw badRequest('VALIDATION_FAILED', detail);
  }
  const writer = new KeyWriter(deps.redis, deps.config.redisPrefix);
  const now = (deps.clock ?? systemClock).now();
  const report: LegacyImportReport = { total: parsed.data.length, imported: 0, skipped: 0, conflicts: [] };
  for (const item of parsed.data) {
    const legacyId = String(item.id);
    const permissions: readonly Permission[] =
      item.permissions && item.permissions.length > 0 ? item.permissions : ['Issuer_User'];
    const record = keyRecord({
      id: legacyKeyUuid(legacyId),
      tenant,
      name: item.name,
      permissions,
      createdBy: 'legacy-import',
      createdAt: new Date(item.createdAt),
      updatedAt: now,
      expiresAt: item.expiresAt !== undefined ? new Date(item.expiresAt) : expiryFor(now, deps.config.keyLifetimeDays),
      revokedAt: item.status === 'Disabled' ? now : null,
      origin: 'legacy',
      legacyId,
      secret: item.rawKey !== undefined ? { rawKey: item.rawKey } : { keyHash: item.keyHash ?? '', last4: '' },
    });
    const { outcome } = await writer.create(record, { limit: 0, deadlineMs: 0 });
    if (outcome === 'created') report.imported += 1;
    else if (outcome === 'exists') report.skipped += 1;
    else report.conflicts.push(Number(legacyId));
  }
  return report;
}
