/** Redis keys of the REST rate limits, built from the deployment's prefix. Nowhere else spells them. */
export function rateLimitKeys(prefix: string) {
  return {
    /** STRING: the per-key bucket (GCRA theoretical arrival time, µs); expires when full again. */
    key: (keyId: string) => `${prefix}:ratelimit:key:${keyId}`,
    /** STRING: the per-tenant bucket. */
    tenant: (tenant: string) => `${prefix}:ratelimit:tenant:${tenant}`,
  };
}
