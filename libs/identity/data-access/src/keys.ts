import { keyTag } from '@proofline/shared-redis';

/**
 * Every Redis key and channel of the identity lib, built from the deployment prefix
 * (config.redisPrefix). Nowhere else spells them. Keys are under the `idty` hash tag
 * (`<prefix>:{idty}:identity:…`): creating a key checks the tenant's limit, the hash index and
 * writes the entity in one script, so on a Redis Cluster they share one slot. The invalidation
 * channel keeps its untagged name (pub/sub is not slotted).
 */
export function identityKeys(prefix: string) {
  const base = `${keyTag(prefix, 'idty')}:identity`;
  return {
    /** redis-om schema name: entity HASH keys are `${keyEntityPrefix}:${id}`. */
    keyEntityPrefix: `${base}:key`,
    keyEntity: (id: string) => `${base}:key:${id}`,
    /** HASH keyHash -> key id (lookup by hash; raw keys are never stored). */
    keyByHash: `${base}:key-by-hash`,
    /** ZSET of a tenant's key ids, score = createdAt (ms). Its size is the tenant's usage. */
    tenantKeys: (tenant: string) => `${base}:tenant:${tenant}:keys`,
    /** Pub/sub channel: message = id of a key that was revoked, re-activated or deleted. */
    invalidationChannel: `${prefix}:identity:key-invalidations`,
  };
}
export type IdentityKeys = ReturnType<typeof identityKeys>;
