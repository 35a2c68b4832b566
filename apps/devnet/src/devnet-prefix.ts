/**
 * The devnet node's state prefix: its chain lives beside, not inside, the service's keys
 * (`<REDIS_PREFIX>:devnet:chain:*`), so the service never reads the node's internals by accident
 * and the node can be wiped without touching records.
 */
export function devnetPrefix(redisPrefix: string): string {
  return `${redisPrefix}:devnet`;
}
