import { randomUUID } from 'node:crypto';
import { Job, Queue, QueueEvents } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import {
  checkKey,
  expiryFor,
  generateRawKey,
  hashKey,
  isLegacyId,
  isUuid,
  isWellFormedKey,
  legacyKeyUuid,
  outranks,
  sameHash,
  sortPermissions,
  toIdentityApiKey,
  toLegacyApiKey,
} from '@proofline/identity-domain';
import type { ApiKeyRecord, IdentityApiKey, LegacyApiKey, Permission, Principal } from '@proofline/identity-domain';
import { KeyReader, KeyWriter, closeOmConnection, openOmConnection } from '@proofline/identity-data-access';
import type { Clock, Config } from '@proofline/shared-config';
import { AppError } from '@proofline/shared-errors';
import { IDENTITY_JOB_NAMES, QUEUES, bullPrefix, createKeyResult } from '@proofline/shared-jobs';
import type { CreateKeyJob, CreateKeyResult } from '@proofline/shared-jobs';
import type { Logger } from '@proofline/shared-logger';
import { bullConnection, createRedis } from '@proofline/shared-redis';
import type { Redis } from '@proofline/shared-redis';
import { identityErrors as E } from './errors';
import { KeyCache } from './key-cache';

export interface IdentityServiceDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Request-path ioredis connection (finite retries). Not closed by the service. */
  readonly redis: Redis;
}

/** A created key: the resource plus the raw key, which is returned this once only. */
export type CreatedKey = IdentityApiKey & { rawKey: string };
export type CreatedLegacyKey = LegacyApiKey & { rawKey: string };

export interface Usage {
  used: number;
  limit: number;
}

/**
 * Identity API keys: authentication, and the use cases behind the identity and legacy key
 * endpoints. Creation goes through the key worker (which holds the per-tenant limit
 * atomically); revoke and delete are single Lua scripts; reads go through redis-om.
 */
export class IdentityService {
  readonly cache = new KeyCache();
  private closed = false;

  private constructor(
    private readonly deps: IdentityServiceDeps,
    private readonly reader: KeyReader,
    private readonly writer: KeyWriter,
    private readonly queue: Queue,
    private readonly queueEvents: QueueEvents,
    private readonly closers: (() => Promise<unknown>)[],
  ) {}

  /** Opens the connections the service needs (redis-om reader, invalidation subscriber, queue). */
  static async open(deps: IdentityServiceDeps): Promise<IdentityService> {
    const { config, logger } = deps;
    const log = logger.child({ component: 'identity' });
    const om = await openOmConnection(config.redisUrl, (err) => log.warn({ err: err.message }, 'redis-om connection error'));
    const reader = new KeyReader(deps.redis, om, config.redisPrefix);
    const writer = new KeyWriter(deps.redis, config.redisPrefix);
    const prefix = bullPrefix(config.redisPrefix);
    const queue = new Queue(QUEUES.identityKeys, { connection: { ...bullConnection(config.redisUrl), maxRetriesPerRequest: 2 } as ConnectionOptions, prefix });
    queue.on('error', (err) => log.warn({ err: err.message }, 'identity queue error'));
    const queueEvents = new QueueEvents(QUEUES.identityKeys, { connection: bullConnection(config.redisUrl) as ConnectionOptions, prefix });
    queueEvents.on('error', (err) => log.warn({ err: err.message }, 'identity queue events error'));
    const subscriber = createRedis(config.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    subscriber.on('error', (err) => log.warn({ err: err.message }, 'key invalidation subscriber error'));

    const service = new IdentityService(deps, reader, writer, queue, queueEvents, [
      () => queueEvents.close(),
      () => queue.close(),
      () => subscriber.quit().catch(() => subscriber.disconnect()),
      () => closeOmConnection(om),
    ]);
    const channel = writer.keys.invalidationChannel;
    subscriber.on('message', (ch: string, keyId: string) => {
      if (ch === channel) service.cache.invalidate(keyId);
    });
    // The cache is trusted only while subscribed: a missed invalidation could otherwise keep a
    // revoked key alive. On every (re)connection, subscribe explicitly, then clear and trust.
    subscriber.on('close', () => service.cache.setTrusted(false));
    subscriber.on('ready', () => {
      subscriber.subscribe(channel).then(
        () => service.cache.setTrusted(true),
        (err: unknown) => log.warn({ err: String(err) }, 'key invalidation subscribe failed'),
      );
    });
    await Promise.all([subscriber.connect(), queueEvents.waitUntilReady(), queue.waitUntilReady()]);
    return service;
  }

  private get log(): Logger {
    return this.deps.logger;
  }

  // --- authentication ---------------------------------------------------------------------

  /**
   * Resolves an `x-api-key` value to its principal. Throws 401 API_KEY_MISSING, API_KEY_INVALID
   * (malformed or unknown), API_KEY_REVOKED or API_KEY_EXPIRED. Expiry is checked against the
   * clock on every call, cache hit or not.
   */
  async authenticate(rawKey: string | undefined): Promise<Principal> {
    if (rawKey === undefined || rawKey.trim() === '') throw E.keyMissing();
    if (!isWellFormedKey(rawKey)) throw E.keyInvalid();
    const keyHash = hashKey(rawKey);
    let record = this.cache.get(keyHash);
    if (!record) {
      const generation = this.cache.generation;
      record = (await this.io(() => this.lookup(keyHash))) ?? undefined;
      if (!record) throw E.keyInvalid();
      this.cache.set(keyHash, record, generation);
    }
    const check = checkKey(record, this.deps.clock.now());
    if (!check.valid) throw check.code === 'REVOKED' ? E.keyRevoked() : E.keyExpired();
    return { keyId: record.id, tenant: record.tenant, permissions: record.permissions, source: record.source };
  }

  private async lookup(keyHash: string): Promise<ApiKeyRecord | null> {
    const id = await this.reader.idByHash(keyHash);
    if (!id) return null;
    const record = await this.reader.fetch(id);
    return record && sameHash(record.keyHash, keyHash) ? record : null;
  }

  // --- identity key endpoints -------------------------------------------------------------

  /**
   * Issues a key in the caller's tenant. 403 identity_api_key_privilege_escalation when a
   * permission outranks the caller's on its side; 403 identity_api_key_limit_exceeded when the
   * tenant is full (decided atomically by the key worker); 503 KEY_SERVICE_UNAVAILABLE when the
   * worker does not answer in time, in which case nothing was created.
   */
  async createKey(caller: Principal, input: { name: string; permissions: readonly Permission[] }): Promise<CreatedKey> {
    const permissions = sortPermissions(input.permissions);
    if (outranks(permissions, caller.permissions)) throw E.escalation('The new key');
    const { keyLimit, keyLifetimeDays, keyCreateTimeoutMs } = this.deps.config;
    if ((await this.io(() => this.reader.count(caller.tenant))) >= keyLimit) throw E.limitExceeded(keyLimit);

    // MUST NOT leave this function except in the response: only the hash goes to the worker.
    const rawKey = generateRawKey();
    const keyHash = hashKey(rawKey);
    const id = randomUUID();
    const now = this.deps.clock.now();
    const record: ApiKeyRecord = {
      id,
      tenant: caller.tenant,
      name: input.name,
      keyHash,
      last4: rawKey.slice(-4),
      permissions,
      createdBy: caller.keyId,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      expiresAt: expiryFor(now, keyLifetimeDays).toISOString(),
      revokedAt: null,
      source: 'identity',
      legacyId: null,
    };
    const deadlineMs = (await this.io(() => this.writer.redisTimeMs())) + keyCreateTimeoutMs;
    const payload: CreateKeyJob = {
      id,
      tenant: record.tenant,
      keyHash,
      last4: record.last4,
      name: record.name,
      permissions: [...permissions],
      createdBy: record.createdBy,
      createdAt: record.createdAt,
      expiresAt: record.expiresAt,
      deadlineMs,
    };
    const outcome = await this.runCreateJob(payload);
    if (outcome === 'limit_exceeded') throw E.limitExceeded(keyLimit);
    if (outcome !== 'created') throw E.serviceUnavailable();
    this.log.info({ keyId: id, tenant: record.tenant, createdBy: record.createdBy }, 'api key created');
    return { ...toIdentityApiKey(record), rawKey };
  }

  /**
   * Enqueues the creation job and waits for the key worker. On a timeout or failure it waits
   * until Redis TIME is past the job's deadline (after which no worker can create the key),
   * then decides from the stored state alone: the key exists (created) or it never will.
   */
  private async runCreateJob(payload: CreateKeyJob): Promise<CreateKeyResult['outcome']> {
    let job: Job;
    try {
      job = await this.queue.add(IDENTITY_JOB_NAMES.createKey, payload, {
        jobId: payload.id,
        attempts: 5,
        backoff: { type: 'exponential', delay: 100 },
        removeOnComplete: { age: 3600, count: 10_000 },
        removeOnFail: { age: 24 * 3600 },
      });
    } catch (err) {
      throw E.serviceUnavailable(err);
    }
    try {
      const result = createKeyResult.safeParse(await job.waitUntilFinished(this.queueEvents, this.deps.config.keyCreateTimeoutMs));
      if (result.success) return result.data.outcome;
    } catch (err) {
      this.log.warn({ keyId: payload.id, tenant: payload.tenant, err: err instanceof Error ? err.message : String(err) }, 'key worker did not answer in time');
    }
    return this.settleAfterDeadline(payload);
  }

  private async settleAfterDeadline(payload: CreateKeyJob): Promise<CreateKeyResult['outcome']> {
    try {
      for (;;) {
        const wait = payload.deadlineMs - (await this.writer.redisTimeMs()) + 1;
        if (wait <= 0) break;
        await new Promise((r) => setTimeout(r, Math.min(wait, 1000)));
      }
      const stored = await this.reader.fetch(payload.id);
      if (stored && sameHash(stored.keyHash, payload.keyHash)) return 'created';
      await Job.fromId(this.queue, payload.id)
        .then((j) => j?.remove())
        .catch(() => undefined);
      return 'too_late';
    } catch (err) {
      throw E.serviceUnavailable(err);
    }
  }

  /** The caller tenant's keys (identity and legacy), newest first. */
  async listKeys(caller: Principal): Promise<IdentityApiKey[]> {
    return (await this.io(() => this.reader.listTenant(caller.tenant))).map(toIdentityApiKey);
  }

  async usage(caller: Principal): Promise<Usage> {
    return { used: await this.io(() => this.reader.count(caller.tenant)), limit: this.deps.config.keyLimit };
  }

  /** Revokes (true) or re-activates (false); idempotent; returns the key as stored afterwards. */
  async revokeKey(caller: Principal, id: string, isRevoked: boolean): Promise<IdentityApiKey> {
    return toIdentityApiKey(await this.setRevoked(caller, this.parseId(id), isRevoked));
  }

  /** Deletes a key of the caller's tenant (frees its slot). */
  async deleteKey(caller: Principal, id: string): Promise<void> {
    await this.remove(caller, this.parseId(id));
  }

  // --- legacy endpoints -------------------------------------------------------------------

  async legacyList(caller: Principal): Promise<LegacyApiKey[]> {
    return (await this.io(() => this.reader.listTenant(caller.tenant))).map(toLegacyApiKey);
  }

  /** Issues an identity key (UUID id) with exactly the caller's own permissions. */
  async legacyCreate(caller: Principal, name: string): Promise<CreatedLegacyKey> {
    const created = await this.createKey(caller, { name, permissions: caller.permissions });
    const { rawKey, ...key } = created;
    return {
      ...toLegacyApiKey({ ...key, tenant: caller.tenant, keyHash: '', last4: rawKey.slice(-4), source: 'identity', legacyId: null }),
      rawKey,
    };
  }

  async legacyDelete(caller: Principal, apiKeyId: string): Promise<void> {
    await this.remove(caller, this.legacyTarget(apiKeyId));
  }

  async legacyPatch(caller: Principal, apiKeyId: string, status: 'Active' | 'Disabled'): Promise<LegacyApiKey> {
    return toLegacyApiKey(await this.setRevoked(caller, this.legacyTarget(apiKeyId), status === 'Disabled'));
  }

  /**
   * The identity id behind a legacy `apiKeyId`: numeric ids map to their stable UUID; a UUID
   * is refused (400, managed by the identity system); anything else is 400 API_KEY_ID_INVALID.
   */
  legacyTarget(apiKeyId: string): string {
    if (isUuid(apiKeyId)) throw E.managedByIdentity(apiKeyId.toLowerCase());
    if (!isLegacyId(apiKeyId)) throw E.legacyIdInvalid(apiKeyId);
    return legacyKeyUuid(apiKeyId);
  }

  // --- internals ----------------------------------------------------------------------------

  private parseId(id: string): string {
    if (!isUuid(id)) throw E.idInvalid(id);
    return id.toLowerCase();
  }

  /** Fetches a key of the caller's tenant that the caller may manage (no escalation by revoke/delete). */
  private async manageable(caller: Principal, id: string): Promise<ApiKeyRecord> {
    const target = await this.io(() => this.reader.fetch(id));
    if (!target || target.tenant !== caller.tenant) throw E.notFound(id);
    if (outranks(target.permissions, caller.permissions)) throw E.escalation(`Key ${id}`);
    return target;
  }

  private async setRevoked(caller: Principal, id: string, revoked: boolean): Promise<ApiKeyRecord> {
    await this.manageable(caller, id);
    const changed = await this.io(() => this.writer.setRevoked(caller.tenant, id, revoked, this.deps.clock.now().toISOString()));
    const after = changed === 'missing' ? null : await this.io(() => this.reader.fetch(id));
    if (!after) throw E.notFound(id);
    if (changed === 'changed') this.log.info({ keyId: id, tenant: caller.tenant, by: caller.keyId, revoked }, 'api key revocation changed');
    return after;
  }

  private async remove(caller: Principal, id: string): Promise<void> {
    await this.manageable(caller, id);
    if (!(await this.io(() => this.writer.delete(caller.tenant, id)))) throw E.notFound(id);
    this.log.info({ keyId: id, tenant: caller.tenant, by: caller.keyId }, 'api key deleted');
  }

  /** Redis faults on the request path become 503 (with Retry-After), never a 500 or a hang. */
  private async io<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw E.storeUnavailable(err);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Bounded: with Redis down a graceful close could wait forever; shutdown must not.
    for (const close of this.closers) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 2000);
      });
      await Promise.race([close().catch(() => undefined), bound]);
      clearTimeout(timer);
    }
  }
}
