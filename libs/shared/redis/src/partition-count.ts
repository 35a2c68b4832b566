import { isClusterClient } from './connection';
import type { RedisClient } from './connection';
import { keyTag } from './keys';
import { DEFAULT_PARTITIONS, SINGLE_PARTITION_UNIT } from './partitions';
import { readPartitionLayouts } from './partition-layouts';

/**
 * The one-partition layout's funding pool counters (`<prefix>:{rec}:wallet:counters`): what
 * `REDIS_PARTITIONS=1` and every version before partitions write. The wallet lib owns the name
 * (`walletKeys`); it is spelt here so the resolver needs no wallet (no project cycle), and the
 * resolver's spec checks both agree.
 */
export function onePartitionPoolKey(prefix: string): string {
  return `${keyTag(prefix, SINGLE_PARTITION_UNIT)}:wallet:counters`;
}

/** Why `resolvePartitions` chose its count (logged at start). */
export type PartitionsSource = 'configured' | 'layouts' | 'one-partition-pool' | 'cluster' | 'standalone';

export interface ResolvedPartitions {
  readonly count: number;
  readonly source: PartitionsSource;
}

/**
 * The records partition count a process runs with. `REDIS_PARTITIONS` set: that value (the
 * refusals of `refuseUnpartitionedPool` / `refuseOnePartitionOverLayouts` still apply). Unset, from
 * the Redis it connects to, so every process of a deployment resolves the same count:
 * 1. the layout registry is non-empty: its largest count (a partitioned deployment keeps it);
 * 2. the one-partition pool exists: 1 (a deployment on `{rec}` keeps it until `migrate-keys`);
 * 3. a Redis Cluster: {@link DEFAULT_PARTITIONS} (partitions spread the write path over masters);
 *    one Redis: 1 (partitions only cost there: more scripts and funding per shard).
 * Two reads at most (SMEMBERS, EXISTS); call once per process at start, before anything uses the count.
 */
export async function resolvePartitions(
  redis: RedisClient,
  prefix: string,
  configured: number | undefined,
): Promise<ResolvedPartitions> {
  if (configured !== undefined) return { count: configured, source: 'configured' };
  const layouts = await readPartitionLayouts(redis, prefix);
  if (layouts.length > 0) return { count: Math.max(...layouts), source: 'layouts' };
  if ((await redis.exists(onePartitionPoolKey(prefix))) === 1) return { count: 1, source: 'one-partition-pool' };
  const count = newDeploymentPartitions(redis);
  return { count, source: count > 1 ? 'cluster' : 'standalone' };
}

/**
 * The count a deployment starts with on `redis` when nothing is there yet (rule 3 of
 * `resolvePartitions`): {@link DEFAULT_PARTITIONS} on a cluster, 1 on one Redis. Test harnesses
 * that shard a fresh prefix's pool or read its records before the service under test starts use it.
 */
export function newDeploymentPartitions(redis: RedisClient): number {
  return isClusterClient(redis) ? DEFAULT_PARTITIONS : 1;
}

/**
 * `config` with its records partition count resolved (`resolvePartitions`): what a composition
 * root passes on, so nothing after it sees an unresolved (`undefined`) count.
 */
export async function withResolvedPartitions<
  C extends { readonly redisPrefix: string; readonly redisPartitions?: number | undefined },
>(redis: RedisClient, config: C): Promise<C & { readonly redisPartitions: number }> {
  const { count } = await resolvePartitions(redis, config.redisPrefix, config.redisPartitions);
  return { ...config, redisPartitions: count };
}
