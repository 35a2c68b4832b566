import { keyTag } from '@proofline/shared-redis';

/**
 * How long a delivered message is remembered: longer than any re-run of its job (a stalled job is
 * retried within a minute; a job whose completion was lost, at once). A re-enqueue of the same
 * jobId is a no-op anyway while BullMQ keeps the finished job.
 */
export const DELIVERED_KEPT_SECONDS = 3600;

/**
 * Every Redis key of the webhooks lib, built from the deployment's prefix. Nowhere else spells them.
 * All under the `wh` hash tag (`<prefix>:{wh}:webhooks:…`): creation and deletion touch a hook and
 * its tenant's set together, so on a Redis Cluster they share one slot.
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
     * ZSET (the watch set, source of truth until delivery jobs exist): txIds of records of tenants
     * with webhooks, published and not yet confirmed or failed; score = when to look next (ms).
     */
    watch: `${p}:watch`,
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
