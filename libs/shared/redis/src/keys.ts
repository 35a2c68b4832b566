/** Keys owned by the shared layer (process liveness, generated secrets). Nowhere else spells them. */
export function sharedKeys(prefix: string) {
  return {
    /** ZSET member = worker instance id, score = last heartbeat (ms). */
    workerHeartbeats: `${prefix}:workers:heartbeats`,
    /** Development JWT secret generated on first use when AUTH_JWT_SECRET is not set. */
    devJwtSecret: `${prefix}:auth:dev-jwt-secret`,
  };
}
