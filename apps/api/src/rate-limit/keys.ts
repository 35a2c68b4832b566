import { keyTag } from '@proofline/shared-redis';

/**
 * Redis keys of the REST rate limits, built from the deployment's prefix. Nowhere else spells them.
 * One hash tag per tenant (`rl:<tenant>`): `rate-limit-2.lua` judges a key's bucket and its
 * tenant's together, so both live in the tenant's slot, and tenants spread over a cluster's masters.
 */
export function rateLimitKeys(prefix: string) {
  const p = (tenant: string): string => `${keyTag(prefix, `rl:${tenant}`)}:ratelimit`;
  return {
    /** STRING: the per-key bucket (GCRA theoretical arrival time, µs); expires when full again. */
    key: (tenant: string, keyId: string) => `${p(tenant)}:key:${keyId}`,
    /** STRING: the per-tenant bucket. */
    tenant: (tenant: string) => `${p(tenant)}:tenant:${tenant}`,
  };
}
