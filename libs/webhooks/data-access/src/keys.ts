/** Every Redis key of the webhooks lib, built from the deployment's prefix. Nowhere else spells them. */
export function webhooksKeys(prefix: string) {
  const tenantPrefix = `${prefix}:webhooks:tenant:`;
  return {
    /** HASH: one webhook (tenant, url, events, sealed secret, createdAt). */
    hook: (id: string) => `${prefix}:webhooks:hook:${id}`,
    /** ZSET: a tenant's webhook ids, score = creation time (ms). */
    tenant: (tenant: string) => `${tenantPrefix}${tenant}`,
    /** Prefix of `tenant(…)`, for the watch script, which learns the tenant from the record. */
    tenantPrefix,
    /** LIST: a webhook's latest delivery attempts (JSON, newest first, trimmed). */
    deliveries: (id: string) => `${prefix}:webhooks:deliveries:${id}`,
    /**
     * ZSET (the watch set, source of truth until delivery jobs exist): txIds of records of tenants
     * with webhooks, published and not yet confirmed or failed; score = when to look next (ms).
     */
    watch: `${prefix}:webhooks:watch`,
    /** STRING: the generated secret-encryption key when WEBHOOK_SECRET_KEY is unset (development). */
    sealKey: `${prefix}:webhooks:seal-key`,
  };
}

export type WebhooksKeys = ReturnType<typeof webhooksKeys>;
