/**
 * Every Redis key and channel of the identity lib, built from the deployment prefix
 * (config.redisPrefix). Nowhere else spells them.
 */
export function identityKeys(prefix: string) {
  const base = `${prefix}:identity`;
  return {
    /** redis-om schema name: entity HASH keys are `${keyEntityPrefix}:${id}`. */
    keyEntityPrefix: `${base}:key`,
    keyEntity: (id: string) => `${base}:key:${id}`,
    /** HASH keyHash -> key id (lookup by hash; raw keys are never stored). */
    keyByHash: `${base}:key-by-hash`,
    /** ZSET of a tenant's key ids, score = createdAt (ms). Its size is the tenant's usage. */
    tenantKeys: (tenant: string) => `${base}:tenant:${tenant}:keys`,
    /** Pub/sub channel: message = id of a key that was revoked, re-activated or deleted. */
    invalidationChannel: `${base}:key-invalidations`,
  };
}
export type IdentityKeys = ReturnType<typeof identityKeys>;
