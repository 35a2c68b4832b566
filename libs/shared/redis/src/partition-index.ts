import type { RedisClient } from './connection';
import { keyTag } from './keys';
import { txIndexUnit } from './partitions';

/**
 * The key of the index bucket holding `txId`: a HASH txId → the unit of the records partition
 * that holds the record. Buckets have hash tags of their own (`ix<bucket>.<n>`), spread over the
 * slot space like the partitions, so the index's work spreads over the masters too.
 */
export function txIndexKey(prefix: string, txId: string): string {
  return `${keyTag(prefix, txIndexUnit(txId))}:partition-index`;
}

/**
 * txId → records partition unit. A record never moves, so an entry never changes: answers are
 * cached per process (bounded, oldest first out); a miss is not cached (the record may be
 * written after). Reads of many txIds make one HMGET per index bucket, concurrently.
 *
 * Writers MUST store a record's index entry no later than the record itself (in the same
 * pipeline on one server, before it on a cluster): a record without its entry cannot be read.
 */
export class PartitionIndex {
  private readonly cache = new Map<string, string>();

  constructor(
    private readonly redis: RedisClient,
    readonly prefix: string,
    private readonly cacheSize = 200_000,
  ) {}

  /** The index key of `txId` (for a writer that sends its HSET in its own pipeline). */
  key(txId: string): string {
    return txIndexKey(this.prefix, txId);
  }

  /** The cached unit of `txId`, without asking Redis. */
  cached(txId: string): string | undefined {
    return this.cache.get(txId);
  }

  /** Caches `txId` → `unit` (a writer that stored the entry, a reader that found it). */
  remember(txId: string, unit: string): void {
    if (this.cache.has(txId)) return;
    if (this.cache.size >= this.cacheSize) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(txId, unit);
  }

  /** Stores and caches `txId` → `unit`. */
  async store(txId: string, unit: string): Promise<void> {
    await this.redis.hset(this.key(txId), txId, unit);
    this.remember(txId, unit);
  }

  /** Drops `txId`'s entry (a record that was refused after its entry was stored). */
  async forget(txId: string): Promise<void> {
    this.cache.delete(txId);
    await this.redis.hdel(this.key(txId), txId);
  }

  /** The unit of each txId, in order; null where the index has none. */
  async lookup(txIds: readonly string[]): Promise<(string | null)[]> {
    const out: (string | null)[] = txIds.map((id) => this.cache.get(id) ?? null);
    const missing: number[] = [];
    out.forEach((unit, i) => {
      if (unit === null) missing.push(i);
    });
    if (missing.length === 0) return out;
    const byKey = new Map<string, number[]>();
    for (const i of missing) {
      const key = this.key(txIds[i] as string);
      const group = byKey.get(key);
      if (group) group.push(i);
      else byKey.set(key, [i]);
    }
    await Promise.all(
      [...byKey].map(async ([key, positions]) => {
        const ids = positions.map((i) => txIds[i] as string);
        const units = await this.redis.hmget(key, ...ids);
        positions.forEach((p, j) => {
          const unit = units[j] ?? null;
          out[p] = unit;
          if (unit !== null) this.remember(ids[j] as string, unit);
        });
      }),
    );
    return out;
  }

  /** The unit of one txId, or null. */
  async lookupOne(txId: string): Promise<string | null> {
    return (await this.lookup([txId]))[0] ?? null;
  }
}
