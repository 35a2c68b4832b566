import type { RedisClient } from './connection';
import { sharedKeys } from './keys';
import { MAX_PARTITIONS } from './partitions';
import type { PartitionLayouts } from './partitions';

/** How often a process re-reads the layout registry: how soon it sees a layout another process added. */
export const LAYOUT_REFRESH_MS = 3000;

/** A process's membership of the layout registry (`joinPartitionLayouts`). */
export interface PartitionLayoutsWatch {
  /** Settles after the first registration and read (never rejects: a failure is retried on the next tick). */
  readonly ready: Promise<void>;
  /** Registers the own count again and reads the registry now. */
  refresh(): Promise<void>;
  stop(): void;
}

/**
 * Joins the deployment's layout registry (`{proc}:partitions:layouts`, a SET of partition counts):
 * registers `own` (SADD: idempotent, so processes starting together cannot race) and adds every
 * count there to `layouts`, at once and then every `everyMs` (0: once). Processes of a
 * deployment that grows P online so come to know every live partition within `everyMs` of the
 * first process of the new layout starting, while each sends roots to its own layout only
 * (docs/redis-cluster.md, "Growing the partition count").
 *
 * With one partition (`own` 1) there is nothing to join: that layout keeps no txId index, so it
 * grows only offline (`redis migrate-keys`); `refuseOnePartitionOverLayouts` guards the reverse.
 */
export function joinPartitionLayouts(
  redis: RedisClient,
  prefix: string,
  own: number,
  layouts: PartitionLayouts,
  options: { everyMs?: number; onError?: (err: Error) => void } = {},
): PartitionLayoutsWatch {
  const key = sharedKeys(prefix).partitionLayouts;
  const everyMs = options.everyMs ?? LAYOUT_REFRESH_MS;
  if (own <= 1) return { ready: Promise.resolve(), refresh: async () => undefined, stop: () => undefined };
  const refresh = async (): Promise<void> => {
    // One round trip: both commands on the one key (one slot).
    const replies = await redis.multi().sadd(key, String(own)).smembers(key).exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (failed) throw failed;
    const members = replies?.[1]?.[1];
    if (!Array.isArray(members)) throw new Error(`layout registry ${key}: unexpected reply`);
    for (const count of parseLayouts(members)) if (count > 1) layouts.add(count);
  };
  const guarded = (): Promise<void> =>
    refresh().catch((err: unknown) => {
      options.onError?.(err instanceof Error ? err : new Error(String(err)));
    });
  const ready = guarded();
  let busy = false;
  const timer =
    everyMs > 0
      ? setInterval(() => {
          if (busy) return;
          busy = true;
          void guarded().finally(() => {
            busy = false;
          });
        }, everyMs)
      : null;
  timer?.unref();
  return { ready, refresh, stop: () => timer && clearInterval(timer) };
}

/** The partition counts in the registry (what `joinPartitionLayouts` adds); ignores what is not a count. */
export async function readPartitionLayouts(redis: RedisClient, prefix: string): Promise<number[]> {
  return parseLayouts(await redis.smembers(sharedKeys(prefix).partitionLayouts));
}

/**
 * Refuses to run with one partition (`rec`) over a Redis whose registry shows partitioned layouts:
 * such a process would neither find their records (it reads no txId index) nor sweep their
 * outboxes. Shrinking to 1 is not a layout change the service makes.
 */
export async function refuseOnePartitionOverLayouts(redis: RedisClient, prefix: string, own: number): Promise<void> {
  if (own !== 1) return;
  const counts = (await readPartitionLayouts(redis, prefix)).filter((c) => c > 1);
  if (counts.length > 0)
    throw new Error(
      `REDIS_PARTITIONS=1, but this deployment has run with ${counts.join(', ')} partitions (${sharedKeys(prefix).partitionLayouts}): run with REDIS_PARTITIONS=${Math.max(...counts)} (docs/redis-cluster.md, "Growing the partition count")`,
    );
}

function parseLayouts(members: readonly unknown[]): number[] {
  return members
    .map((m) => Number(m))
    .filter((n) => Number.isInteger(n) && n >= 1 && n <= MAX_PARTITIONS)
    .sort((a, b) => a - b);
}
