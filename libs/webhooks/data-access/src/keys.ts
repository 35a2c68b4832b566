import { keyTag, txShard, txShardTag } from '@proofline/shared-redis';

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
