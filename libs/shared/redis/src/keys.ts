/**
 * The first part of every key of one unit of atomicity: `<prefix>:{<unit>}`. Redis Cluster hashes
 * only what is inside the braces, so every key of a unit lands in one slot and a Lua script or
 * MULTI may touch any of them together; keys of different units may live on different masters.
 * Units: `rec` (records, their transactions and chains, the outbox, the funding pool), `arc` (ARC
 * block data, inclusions, verdict bookkeeping), `idty` (identity keys), `wh` (webhooks), `proc`
 * (process liveness, generated secrets), `devnet` (the devnet node's chain), one per tenant for
 * rate limits and idempotency, and one per BullMQ queue.
 */
export function keyTag(prefix: string, unit: string): string {
  return `${prefix}:{${unit}}`;
}

/** Keys owned by the shared layer (process liveness, generated secrets). Nowhere else spells them. */
export function sharedKeys(prefix: string) {
  const p = keyTag(prefix, 'proc');
  return {
    /** ZSET member = worker instance id, score = last heartbeat (ms). */
    workerHeartbeats: `${p}:workers:heartbeats`,
    /** Development JWT secret generated on first use when AUTH_JWT_SECRET is not set. */
    devJwtSecret: `${p}:auth:dev-jwt-secret`,
    /** SET of the records partition counts (`REDIS_PARTITIONS` > 1) processes have run with: the live layouts. */
    partitionLayouts: `${p}:partitions:layouts`,
  };
}
