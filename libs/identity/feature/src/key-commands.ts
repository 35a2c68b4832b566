import { randomUUID } from 'node:crypto';
import { expiryFor, isUuid, issueKey, outranks, sortPermissions, toIdentityApiKey } from '@proofline/identity-domain';
import type { ApiKeyRecord, IdentityApiKey, Permission, Principal } from '@proofline/identity-domain';
import type { KeyReader, KeyWriter } from '@proofline/identity-data-access';
import type { Clock, Config } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import { identityErrors as E } from './errors';
import type { CreateKeyJobs } from './key-job-client';
import { storeCall } from './store-call';

/** A created key: the resource plus the raw key, which is returned this once only. */
export type CreatedKey = IdentityApiKey & { rawKey: string };

export interface Usage {
  used: number;
  limit: number;
}

export interface KeyCommandsDeps {
  readonly config: Pick<Config, 'keyLimit' | 'keyLifetimeDays'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly reader: KeyReader;
  readonly writer: KeyWriter;
  readonly jobs: CreateKeyJobs;
}

/**
 * The key commands behind the identity key endpoints (REST and GraphQL alike), all scoped to the
 * caller's tenant. Creation goes through the key worker (which holds the per-tenant limit
 * atomically); revoke and delete are single Lua scripts; reads go through redis-om.
 */
export class KeyCommands {
  constructor(private readonly deps: KeyCommandsDeps) {}

  /**
   * Issues a key in the caller's tenant. 403 identity_api_key_privilege_escalation when a
   * permission outranks the caller's on its side; 403 identity_api_key_limit_exceeded when the
   * tenant is full (decided atomically by the key worker); 503 KEY_SERVICE_UNAVAILABLE when the
   * worker does not answer in time, in which case nothing was created.
   */
  async createKey(caller: Principal, input: { name: string; permissions: readonly Permission[] }): Promise<CreatedKey> {
    const permissions = sortPermissions(input.permissions);
    if (outranks(permissions, caller.permissions)) throw E.escalation('The new key');
    const { keyLimit, keyLifetimeDays } = this.deps.config;
    if ((await storeCall(() => this.deps.reader.count(caller.tenant))) >= keyLimit) throw E.limitExceeded(keyLimit);

    // The raw key MUST NOT leave this function except in the response: only the hash goes to the worker.
    const now = this.deps.clock.now();
    const { rawKey, record } = issueKey({
      id: randomUUID(),
      tenant: caller.tenant,
      name: input.name,
      permissions,
      createdBy: caller.keyId,
      createdAt: now,
      expiresAt: expiryFor(now, keyLifetimeDays),
    });
    const deadlineMs = (await storeCall(() => this.deps.writer.redisTimeMs())) + this.deps.jobs.timeoutMs;
    const outcome = await this.deps.jobs.run({
      id: record.id,
      tenant: record.tenant,
      keyHash: record.keyHash,
      last4: record.last4,
      name: record.name,
      permissions: [...record.permissions],
      createdBy: record.createdBy,
      createdAt: record.createdAt,
      expiresAt: record.expiresAt,
      deadlineMs,
    });
    if (outcome === 'limit_exceeded') throw E.limitExceeded(keyLimit);
    if (outcome !== 'created') throw E.serviceUnavailable();
    this.deps.logger.info({ keyId: record.id, tenant: record.tenant, createdBy: record.createdBy }, 'api key created');
    return { ...toIdentityApiKey(record), rawKey };
  }

  /** The caller tenant's keys (identity and legacy), newest first. */
  async listKeys(caller: Principal): Promise<IdentityApiKey[]> {
    return (await this.tenantRecords(caller)).map(toIdentityApiKey);
  }

  /** The caller tenant's stored keys, newest first (the legacy mapping shapes them its own way). */
  async tenantRecords(caller: Principal): Promise<ApiKeyRecord[]> {
    return storeCall(() => this.deps.reader.listTenant(caller.tenant));
  }

  async usage(caller: Principal): Promise<Usage> {
    return { used: await storeCall(() => this.deps.reader.count(caller.tenant)), limit: this.deps.config.keyLimit };
  }

  /** Revokes (true) or re-activates (false); idempotent; returns the key as stored afterwards. */
  async revokeKey(caller: Principal, id: string, isRevoked: boolean): Promise<IdentityApiKey> {
    return toIdentityApiKey(await this.setRevoked(caller, parseId(id), isRevoked));
  }

  /** Deletes a key of the caller's tenant (frees its slot). */
  async deleteKey(caller: Principal, id: string): Promise<void> {
    await this.remove(caller, parseId(id));
  }

  /** Revokes or re-activates key `id` (already a lowercase UUID); returns the stored record. */
  async setRevoked(caller: Principal, id: string, revoked: boolean): Promise<ApiKeyRecord> {
    await this.manageable(caller, id);
    const changed = await storeCall(() =>
      this.deps.writer.setRevoked(caller.tenant, id, revoked, this.deps.clock.now().toISOString()),
    );
    const after = changed === 'missing' ? null : await storeCall(() => this.deps.reader.fetch(id));
    if (!after) throw E.notFound(id);
    if (changed === 'changed')
      this.deps.logger.info(
        { keyId: id, tenant: caller.tenant, by: caller.keyId, revoked },
        'api key revocation changed',
      );
    return after;
  }

  /** Deletes key `id` (already a lowercase UUID). */
  async remove(caller: Principal, id: string): Promise<void> {
    await this.manageable(caller, id);
    if (!(await storeCall(() => this.deps.writer.delete(caller.tenant, id)))) throw E.notFound(id);
    this.deps.logger.info({ keyId: id, tenant: caller.tenant, by: caller.keyId }, 'api key deleted');
  }

  /** Fetches a key of the caller's tenant that the caller may manage (no escalation by revoke/delete). */
  private async manageable(caller: Principal, id: string): Promise<ApiKeyRecord> {
    const target = await storeCall(() => this.deps.reader.fetch(id));
    if (!target || target.tenant !== caller.tenant) throw E.notFound(id);
    if (outranks(target.permissions, caller.permissions)) throw E.escalation(`Key ${id}`);
    return target;
  }
}

function parseId(id: string): string {
  if (!isUuid(id)) throw E.idInvalid(id);
  return id.toLowerCase();
}
