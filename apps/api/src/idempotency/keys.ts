import { keyTag } from '@proofline/shared-redis';

/**
 * Redis keys of idempotent writes, built from the deployment's prefix. Nowhere else spells them.
 * One hash tag per tenant (`idem:<tenant>`): every command touches one entry, so no two need a
 * common slot; the tenant tag spreads tenants over a cluster's masters.
 */
export function idempotencyKeys(prefix: string) {
  return {
    /**
     * STRING (JSON): the claim, then the recorded answer, of one `Idempotency-Key` of one tenant.
     * `lookup` is a SHA-256 of the key (the raw key is never stored: it also derives the key that
     * encrypts the recorded answer).
     */
    entry: (tenant: string, lookup: string) => `${keyTag(prefix, `idem:${tenant}`)}:idempotency:${tenant}:${lookup}`,
  };
}
