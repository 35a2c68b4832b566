import { checkKey, hashKey, isWellFormedKey, sameHash } from '@proofline/identity-domain';
import type { ApiKeyRecord, Principal } from '@proofline/identity-domain';
import type { KeyReader } from '@proofline/identity-data-access';
import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import type { Admission } from './admission';
import { identityErrors as E } from './errors';
import { KeyCache } from './key-cache';
import { storeCall } from './store-call';

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
