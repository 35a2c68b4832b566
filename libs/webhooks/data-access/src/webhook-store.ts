import path from 'node:path';
import type { RedisClient } from '@proofline/shared-redis';
import {
  ALL_TX_SHARDS,
  TX_SHARDS,
  forEachTxShard,
  fromScriptReply,
  keyTag,
  loadLuaCommands,
  txShard,
  txShardTag,
} from '@proofline/shared-redis';
import { MAX_DELIVERIES_KEPT } from '@proofline/webhooks-domain';
import type { DeliveryAttempt, StoredWebhook, WebhookEvent } from '@proofline/webhooks-domain';

/**
 * How long a delivered message is remembered: longer than any re-run of its job (a stalled job is
 * retried within a minute; a job whose completion was lost, at once). A re-enqueue of the same
 * jobId is a no-op anyway while BullMQ keeps the finished job.
 */
export const DELIVERED_KEPT_SECONDS = 3600;

/** The txId-shard family of the watch set (`<prefix>:{whw<shard>.<n>}:webhooks:watch`). */
export const WATCH_SHARD_FAMILY = 'whw';

/**
 * Every Redis key of the webhooks lib, built from the deployment's prefix. Nowhere else spells them.
 * Under the `wh` hash tag (`<prefix>:{wh}:webhooks:…`): creation and deletion touch a hook and
 * its tenant's set together, so on a Redis Cluster they share one slot. The watch set, written
 * once per published record, is split into the 64 txId shards (`TX_SHARDS`, tags by slot range)
 * so its work spreads over the masters; nothing touches two of its shards in one command.
 */
export function webhooksKeys(prefix: string) {
  const p = `${keyTag(prefix, 'wh')}:webhooks`;
  return {
    /** HASH: one webhook (tenant, url, events, sealed secret, createdAt). */
    hook: (id: string) => `${p}:hook:${id}`,
    /** ZSET: a tenant's webhook ids, score = creation time (ms). */
    tenant: (tenant: string) => `${p}:tenant:${tenant}`,
    /** LIST: a webhook's latest delivery attempts (JSON, newest first, trimmed). */
    deliveries: (id: string) => `${p}:deliveries:${id}`,
    /**
     * ZSET, one per txId shard (the watch set, source of truth until delivery jobs exist): txIds of
     * records of tenants with webhooks, published and not yet confirmed or failed, whose txId falls
     * in `shard` (`txShard`); score = when to look next (ms).
     */
    watch: (shard: number) => `${txShardTag(prefix, WATCH_SHARD_FAMILY, shard)}:webhooks:watch`,
    /** The watch set shard holding `txId`. */
    watchOf: (txId: string) => `${txShardTag(prefix, WATCH_SHARD_FAMILY, txShard(txId))}:webhooks:watch`,
    /** ZSET: the watch set as it was before the txId shards (one key); only `redis migrate-keys` reads it. */
    legacyWatch: `${p}:watch`,
    /** STRING: the watcher's one-pass-at-a-time lock (a token, 30 s TTL). */
    watchLock: `${p}:watch:lock`,
    /**
     * STRING: the delivery ledger of one message to one webhook: `sending:{token}` while an attempt
     * holds it (a lease), `delivered` after a 2xx (kept {@link DELIVERED_KEPT_SECONDS}).
     */
    sent: (id: string, messageId: string) => `${p}:sent:${id}:${messageId}`,
    /** STRING: the generated secret-encryption key when WEBHOOK_SECRET_KEY is unset (development). */
    sealKey: `${p}:seal-key`,
  };
}

export type WebhooksKeys = ReturnType<typeof webhooksKeys>;

interface Commands {
  createWebhook(k1: string, k2: string, ...argv: string[]): Promise<unknown>;
}

export const CREATE_WEBHOOK_REPLIES = { OK: 'OK', LIMIT: 'LIMIT' } as const;

/** What {@link WebhookStore.claimDelivery} found. */
export type ClaimOutcome = 'claimed' | 'delivered' | 'busy';

/**
 * Redis storage of webhooks, their delivery log and the watch set. Creation holds the per-tenant
 * limit in one script; every read is one round trip.
 */
export class WebhookStore {
  readonly keys: WebhooksKeys;
  private readonly cmd: Commands;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = webhooksKeys(prefix);
    loadLuaCommands(redis, path.join(__dirname, 'lua'));
    this.cmd = redis as unknown as Commands;
  }

  /** Stores `hook` unless its tenant has `limit` webhooks already. */
  async createWebhook(hook: StoredWebhook, limit: number): Promise<'OK' | 'LIMIT'> {
    const at = Date.parse(hook.createdAt);
    const reply = await this.cmd.createWebhook(
      this.keys.hook(hook.id),
      this.keys.tenant(hook.tenant),
      hook.id,
      String(at),
      String(limit),
      ...[
        'id',
        hook.id,
        'tenant',
        hook.tenant,
        'url',
        hook.url,
        'events',
        JSON.stringify(hook.events),
        'secret',
        hook.secretSealed,
        'createdAt',
        hook.createdAt,
      ],
    );
    return fromScriptReply('create-webhook-2.lua', CREATE_WEBHOOK_REPLIES, reply);
  }

  async get(id: string): Promise<StoredWebhook | null> {
    return toHook(await this.redis.hgetall(this.keys.hook(id)));
  }

  /** A tenant's webhooks, oldest first. Two round trips. */
  async list(tenant: string): Promise<StoredWebhook[]> {
    const ids = await this.redis.zrange(this.keys.tenant(tenant), 0, -1);
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.hook(id));
    const replies = (await pipeline.exec()) ?? [];
    return replies
      .map(([err, v]) => (err ? null : toHook(v as Record<string, string>)))
      .filter((h): h is StoredWebhook => h !== null);
  }

  /** Deletes a webhook of `tenant` with its delivery log; false when it is not the tenant's. */
  async delete(tenant: string, id: string): Promise<boolean> {
    const hook = await this.get(id);
    if (!hook || hook.tenant !== tenant) return false;
    await this.redis
      .multi()
      .del(this.keys.hook(id), this.keys.deliveries(id))
      .zrem(this.keys.tenant(tenant), id)
      .exec();
    return true;
  }

  /** Appends one delivery attempt to the webhook's log (newest first, at most {@link MAX_DELIVERIES_KEPT}). */
  async recordAttempt(id: string, attempt: DeliveryAttempt): Promise<void> {
    const key = this.keys.deliveries(id);
    await this.redis
      .multi()
      .lpush(key, JSON.stringify(attempt))
      .ltrim(key, 0, MAX_DELIVERIES_KEPT - 1)
      .exec();
  }

  /**
   * Claims the right to send `messageId` to webhook `id` for `leaseMs`: `claimed` (send it),
   * `delivered` (a 2xx was already received: never send it again) or `busy` (another attempt of
   * the same message is running: send nothing now).
   */
  async claimDelivery(id: string, messageId: string, token: string, leaseMs: number): Promise<ClaimOutcome> {
    const key = this.keys.sent(id, messageId);
    if ((await this.redis.set(key, `sending:${token}`, 'PX', leaseMs, 'NX')) === 'OK') return 'claimed';
    return (await this.redis.get(key)) === 'delivered' ? 'delivered' : 'busy';
  }

  /** Records that `messageId` reached webhook `id` (a 2xx). MUST run before the attempt is logged or the job completes. */
  async markDelivered(id: string, messageId: string): Promise<void> {
    await this.redis.set(this.keys.sent(id, messageId), 'delivered', 'EX', DELIVERED_KEPT_SECONDS);
  }

  /** Gives up a claim after a failed attempt, so the retry may send (only the claim's own token). */
  async releaseDelivery(id: string, messageId: string, token: string): Promise<void> {
    await this.redis.eval(
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
      1,
      this.keys.sent(id, messageId),
      `sending:${token}`,
    );
  }

  /** The latest delivery attempts, newest first. */
  async deliveries(id: string, limit = MAX_DELIVERIES_KEPT): Promise<DeliveryAttempt[]> {
    const items = await this.redis.lrange(this.keys.deliveries(id), 0, limit - 1);
    return items.map((s) => JSON.parse(s) as DeliveryAttempt);
  }

  /**
   * Puts `txId`, a record of `tenant`, in the watch set if the tenant has webhooks. MUST run before
   * the record can be confirmed (before its submission), so no confirmation goes unseen.
   *
   * Two commands, no script: the tenant's webhook set is under `{wh}` and the txId's watch shard
   * under a tag of its own, and a Redis Cluster refuses one command on both. The check writes
   * nothing and the add is idempotent (ZADD NX), so a crash between them leaves no state. A webhook
   * created between them misses this record, as it would have a moment later; one deleted between
   * them leaves a watched record the watcher finds no webhook for and drops.
   */
  async watchRecord(tenant: string, txId: string, at: Date): Promise<boolean> {
    if ((await this.redis.exists(this.keys.tenant(tenant))) === 0) return false;
    await this.redis.zadd(this.keys.watchOf(txId), 'NX', at.getTime(), txId);
    return true;
  }

  /**
   * The tenant of a record (`recordKey`: its hash key, from the records lib's keys), or null when
   * the record is unknown: the first step of a watch when the caller does not know the tenant. A
   * read of the records unit, never in one command with a webhooks key (another hash tag).
   */
  async recordTenant(recordKey: string): Promise<string | null> {
    return this.redis.hget(recordKey, 'tenant');
  }

  /**
   * Watched txIds due for a look at `now`: from every shard its oldest due ones, at most
   * ⌈limit / 64⌉ each, read concurrently (one round per master), so no shard waits behind
   * another's backlog. `more` when a shard had more due than it gave.
   */
  async dueWatched(now: Date, limit: number): Promise<{ txIds: string[]; more: boolean }> {
    const each = Math.max(1, Math.ceil(limit / TX_SHARDS));
    const shards = await Promise.all(
      ALL_TX_SHARDS.map((shard) =>
        this.redis.zrangebyscore(this.keys.watch(shard), '-inf', now.getTime(), 'LIMIT', 0, each),
      ),
    );
    return { txIds: shards.flat(), more: shards.some((due) => due.length === each) };
  }

  /** Looks at `txIds` again at `at` (only those still watched). */
  async rewatch(txIds: readonly string[], at: Date): Promise<void> {
    await forEachTxShard(txIds, (shard, ids) =>
      this.redis.zadd(this.keys.watch(shard), 'XX', ...ids.flatMap((t) => [at.getTime(), t])),
    );
  }

  /** Adds `txIds` to the watch set (a failed record's successors). */
  async watch(txIds: readonly string[], at: Date): Promise<void> {
    await forEachTxShard(txIds, (shard, ids) =>
      this.redis.zadd(this.keys.watch(shard), 'NX', ...ids.flatMap((t) => [at.getTime(), t])),
    );
  }

  /** Drops `txIds` from the watch set. MUST run only after their delivery jobs exist. */
  async unwatch(txIds: readonly string[]): Promise<void> {
    await forEachTxShard(txIds, (shard, ids) => this.redis.zrem(this.keys.watch(shard), ...ids));
  }

  /** Watched txIds across every shard. */
  async watchedCount(): Promise<number> {
    const counts = await Promise.all(ALL_TX_SHARDS.map((shard) => this.redis.zcard(this.keys.watch(shard))));
    return counts.reduce((a, b) => a + b, 0);
  }

  /** Whether `txId` is in the watch set. */
  async isWatched(txId: string): Promise<boolean> {
    return (await this.redis.zscore(this.keys.watchOf(txId), txId)) !== null;
  }

  /** The stored secret-encryption key, or `candidate` stored now if none was (SET NX: every process agrees). */
  async sealKey(candidate: string): Promise<string> {
    await this.redis.set(this.keys.sealKey, candidate, 'NX');
    return (await this.redis.get(this.keys.sealKey)) ?? candidate;
  }
}

function toHook(h: Record<string, string> | null | undefined): StoredWebhook | null {
  if (!h || !h['id'] || !h['tenant'] || !h['url']) return null;
  return {
    id: h['id'],
    tenant: h['tenant'],
    url: h['url'],
    events: JSON.parse(h['events'] ?? '[]') as WebhookEvent[],
    secretSealed: h['secret'] ?? '',
    createdAt: h['createdAt'] ?? '',
  };
}
