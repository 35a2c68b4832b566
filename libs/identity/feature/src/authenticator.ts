import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { checkKey, hasAnyPermission, hashKey, isWellFormedKey, sameHash } from '@proofline/identity-domain';
import type { ApiKeyRecord, Permission, Principal } from '@proofline/identity-domain';
import type { KeyReader } from '@proofline/identity-data-access';
import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import type { Admission } from './admission';
import { identityErrors as E } from './errors';
import { storeCall } from './store-call';

/*
 * A request's key, from header to principal: `requireKey` (the Express middleware every keyed
 * route runs), the `Authenticator` it calls, and the `KeyCache` of verified keys behind it.
 */

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by {@link requireKey}: the authenticated caller. */
    principal?: Principal;
  }
}

/**
 * Express middleware: authenticates `x-api-key` (401 API_KEY_MISSING / API_KEY_INVALID /
 * API_KEY_REVOKED / API_KEY_EXPIRED) and, when `permissions` are given, requires one of them
 * (403 PERMISSION_DENIED). With no permissions any valid key passes. Sets `req.principal`.
 * Between the two, the authenticator's admission (rate limits), when it has one, admits the
 * caller (its headers go on the response) or refuses it (429 RATE_LIMITED), so a key cannot
 * flood the service with requests it lacks the permission for either.
 *
 * @example router.post('/records', requireKey(deps.identity.authenticator, 'Issuer_Admin', 'Issuer_User'), handler)
 */
export function requireKey(
  authenticator: Pick<Authenticator, 'authenticate'> & { readonly admission?: Admission | undefined },
  ...permissions: Permission[]
): RequestHandler {
  const { admission } = authenticator;
  const check = async (req: Request, res: Response): Promise<Principal> => {
    const principal = await authenticator.authenticate(req.header('x-api-key'));
    if (admission) {
      const admitted = await admission(principal);
      for (const [name, value] of Object.entries(admitted.headers)) res.setHeader(name, value);
    }
    if (!hasAnyPermission(principal.permissions, permissions)) throw E.permissionDenied(permissions);
    return principal;
  };
  return (req: Request, res: Response, next: NextFunction) => {
    check(req, res).then(
      (principal) => {
        req.principal = principal;
        req.log = req.log.child({ keyId: principal.keyId, tenant: principal.tenant });
        next();
      },
      (err: unknown) => next(err),
    );
  };
}

/** The principal set by {@link requireKey}; throws 401 when the route forgot to require a key. */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw E.keyMissing();
  return req.principal;
}

/**
 * Resolves `x-api-key` values to principals, through a per-process cache of verified keys that
 * is trusted only while the invalidation subscription is live (see {@link listen}).
 */
export class Authenticator {
  readonly cache = new KeyCache();

  constructor(
    private readonly reader: KeyReader,
    private readonly clock: Clock,
    /** Rate limits of the REST app, run by `requireKey` after authentication (absent = none). */
    readonly admission?: Admission,
  ) {}

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
      record = (await storeCall(() => this.lookup(keyHash))) ?? undefined;
      if (!record) throw E.keyInvalid();
      this.cache.set(keyHash, record, generation);
    }
    const check = checkKey(record, this.clock.now());
    if (!check.valid) throw check.code === 'REVOKED' ? E.keyRevoked() : E.keyExpired();
    return { keyId: record.id, tenant: record.tenant, permissions: record.permissions, source: record.source };
  }

  private async lookup(keyHash: string): Promise<ApiKeyRecord | null> {
    const id = await this.reader.idByHash(keyHash);
    if (!id) return null;
    const record = await this.reader.fetch(id);
    return record && sameHash(record.keyHash, keyHash) ? record : null;
  }

  /**
   * Listens for key invalidations on `subscriber` (a connection the app opened for pub/sub; it
   * may carry other channels). The cache is trusted only while subscribed: a missed
   * invalidation could otherwise keep a revoked key alive. On every (re)connection it subscribes
   * explicitly, then clears and trusts. Returns a detach function that unsubscribes this channel
   * and removes the listeners; it never closes the connection.
   */
  async listen(subscriber: RedisClient, channel: string, log: Logger): Promise<() => Promise<void>> {
    const onMessage = (ch: string, keyId: string) => {
      if (ch === channel) this.cache.invalidate(keyId);
    };
    const onClose = () => this.cache.setTrusted(false);
    const subscribe = () =>
      subscriber.subscribe(channel).then(
        () => this.cache.setTrusted(true),
        (err: unknown) => log.warn({ err: String(err) }, 'key invalidation subscribe failed'),
      );
    const onReady = () => void subscribe();
    subscriber.on('message', onMessage);
    subscriber.on('close', onClose);
    subscriber.on('ready', onReady);
    if (subscriber.status === 'ready') await subscribe();
    return async () => {
      subscriber.off('message', onMessage);
      subscriber.off('close', onClose);
      subscriber.off('ready', onReady);
      this.cache.setTrusted(false);
      if (subscriber.status === 'ready') await subscriber.unsubscribe(channel).catch(() => undefined);
    };
  }
}

/**
 * In-process cache of verified keys, by key hash: bounded, short TTL, invalidated by key id
 * through Redis pub/sub. It is only trusted while the invalidation subscriber is connected and
 * subscribed; every invalidation bumps a generation so a lookup that raced an invalidation can
 * not re-insert a stale entry.
 */
export class KeyCache {
  private readonly entries = new Map<string, { record: ApiKeyRecord; at: number }>();
  private generationValue = 0;
  private trusted = false;

  constructor(
    private readonly maxEntries = 10_000,
    private readonly ttlMs = 30_000,
  ) {}

  get generation(): number {
    return this.generationValue;
  }

  get size(): number {
    return this.entries.size;
  }

  get(keyHash: string): ApiKeyRecord | undefined {
    if (!this.trusted) return undefined;
    const hit = this.entries.get(keyHash);
    if (!hit) return undefined;
    if (Date.now() - hit.at > this.ttlMs) {
      this.entries.delete(keyHash);
      return undefined;
    }
    return hit.record;
  }

  /** Inserts only when no invalidation happened since `generation` was read. */
  set(keyHash: string, record: ApiKeyRecord, generation: number): void {
    if (!this.trusted || generation !== this.generationValue) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(keyHash, { record, at: Date.now() });
  }

  invalidate(keyId: string): void {
    this.generationValue += 1;
    for (const [hash, { record }] of this.entries) if (record.id === keyId) this.entries.delete(hash);
  }

  clear(): void {
    this.generationValue += 1;
    this.entries.clear();
  }

  /** Called when the subscriber (re)subscribes (true) or loses its connection (false). */
  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.clear();
  }
}
