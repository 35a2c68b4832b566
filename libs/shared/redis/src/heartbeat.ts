import type { RedisClient } from './connection';
import { sharedKeys } from './keys';

/** How long a heartbeat counts: a worker beats every `HEARTBEAT_EVERY_MS`. */
export const HEARTBEAT_EVERY_MS = 2000;
export const HEARTBEAT_FRESH_MS = 10_000;

/** Starts beating for `instanceId`; returns a stop function that also removes the entry. */
export function startHeartbeat(redis: RedisClient, prefix: string, instanceId: string): () => Promise<void> {
  const key = sharedKeys(prefix).workerHeartbeats;
  const beat = () =>
    redis
      .multi()
      .zadd(key, Date.now(), instanceId)
      .zremrangebyscore(key, '-inf', Date.now() - 10 * HEARTBEAT_FRESH_MS)
      .exec()
      .catch(() => undefined);
  void beat();
  const timer = setInterval(beat, HEARTBEAT_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await redis.zrem(key, instanceId).catch(() => undefined);
  };
}

/** Number of workers that beat within the freshness window. */
export async function liveWorkers(redis: RedisClient, prefix: string, now = Date.now()): Promise<number> {
  return redis.zcount(sharedKeys(prefix).workerHeartbeats, now - HEARTBEAT_FRESH_MS, '+inf');
}
