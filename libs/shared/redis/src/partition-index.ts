import path from 'node:path';
import { isClusterClient } from './connection';
import type { RedisClient } from './connection';
import { loadLuaCommands } from './scripts';
import { keyTag } from './keys';
import { MAX_PARTITIONS, txIndexUnit } from './partitions';

/**
 * Sub-buckets per index bucket: the txId's third hex digit (mod 8) picks one of 8 small HASHes under the
 * bucket's hash tag. Fixed (a reader computes the key from the txId alone). Redis keeps a HASH of
 * at most `hash-max-listpack-entries` (128) short fields as a listpack, ~36 B an entry here,
 * against ~100 B in a hashtable: 256 × 8 × 128 ≈ 262,000 records fit in listpacks; past that
 * the sub-buckets turn into hashtables one by one (still correct, ~100 B an entry) unless the
 * server's `hash-max-listpack-entries` is raised (docs/redis-cluster.md, "The txId → partition index").
 */
export const TX_INDEX_SUB_BUCKETS = 8;

/** The index key of `txId`: the HASH under its bucket's tag (`ix<bucket>.<n>`) for its sub-bucket. */
export function txIndexKey(prefix: string, txId: string): string {
  const sub = Number.parseInt(txId.charAt(2), 16);
  if (Number.isNaN(sub)) throw new RangeError(`not a hex txId: ${JSON.stringify(txId.slice(0, 16))}`);
  return `${keyTag(prefix, txIndexUnit(txId))}:pix:${sub % TX_INDEX_SUB_BUCKETS}`;
}

/**
 * The field of `txId` in its index key: the txId's bytes after the first (which picked the bucket),
 * raw — 31 bytes, not 64 hex characters.
 */
export function txIndexField(txId: string): Buffer {
  return Buffer.from(txId.slice(2), 'hex');
}

/**
 * The key of the index as written before sub-buckets (a HASH per bucket, field = the txId in hex,
 * value = the unit): read on a miss so entries of an existing deployment keep answering.
 */
export function legacyTxIndexKey(prefix: string, txId: string): string {
  return `${keyTag(prefix, txIndexUnit(txId))}:partition-index`;
}

const PARTITION_UNIT = /^r([0-9]+)\.([0-9]+)$/;

/**
 * A unit as stored in the index: a partition unit `r<index>.<n>` as the integer
 * `n · MAX_PARTITIONS + index` (a listpack keeps it as an integer of 1–3 bytes; it does not depend
 * on the partition count, so it stays right when the count grows); any other unit as it is.
 */
export function encodeIndexUnit(unit: string): string {
  const m = PARTITION_UNIT.exec(unit);
  if (!m) return unit;
  const index = Number(m[1]);
  const n = Number(m[2]);
  if (index >= MAX_PARTITIONS || !Number.isSafeInteger(n * MAX_PARTITIONS + index) || `r${index}.${n}` !== unit)
    return unit;
  return String(n * MAX_PARTITIONS + index);
}

/** The unit an index value stands for (the inverse of {@link encodeIndexUnit}). */
export function decodeIndexUnit(value: string): string {
  if (!/^[0-9]+$/.test(value)) return value;
  const v = Number(value);
  return `r${v % MAX_PARTITIONS}.${Math.floor(v / MAX_PARTITIONS)}`;
}

/**
 * txId → records partition unit. A record never moves, so an entry never changes: answers are
 * cached per process (bounded, oldest first out); a miss is not cached (the record may be
 * written after). Reads of many txIds make one HMGET per index key, concurrently; txIds not found
 * there are asked again, one HMGET per bucket, in the index's form from before sub-buckets
 * ({@link legacyTxIndexKey}), which `redis migrate-keys` converts.
 *
 * Writers MUST store a record's index entry no later than the record itself (in the same
 * pipeline on one server, before it on a cluster): a record without its entry cannot be read.
 */
export class PartitionIndex {
  private readonly cache = new Map<string, string>();
  /** On one Redis, a lookup's keys go into one `hget-many-n.lua` call (null: one HMGET per key). */
  private readonly many: HGetMany | null;

  constructor(
    private readonly redis: RedisClient,
    readonly prefix: string,
    private readonly cacheSize = 200_000,
  ) {
    this.many = isClusterClient(redis) ? null : hgetManyOf(redis);
  }

  /** The index key of `txId` (for a writer that sends its HSET in its own pipeline). */
  key(txId: string): string {
    return txIndexKey(this.prefix, txId);
  }

  /** The HSET arguments of an entry: key, field, value. */
  entry(txId: string, unit: string): [key: string, field: Buffer, value: string] {
    return [this.key(txId), txIndexField(txId), encodeIndexUnit(unit)];
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
    await this.redis.hset(...this.entry(txId, unit));
    this.remember(txId, unit);
  }

  /** Drops `txId`'s entry (a record that was refused after its entry was stored). */
  async forget(txId: string): Promise<void> {
    this.cache.delete(txId);
    await this.redis.hdel(this.key(txId), txIndexField(txId));
  }

  /** The unit of each txId, in order; null where the index has none. */
  async lookup(txIds: readonly string[]): Promise<(string | null)[]> {
    const out: (string | null)[] = txIds.map((id) => this.cache.get(id) ?? null);
    const missing: number[] = [];
    out.forEach((unit, i) => {
      if (unit === null) missing.push(i);
    });
    if (missing.length === 0) return out;
    await this.ask(txIds, missing, out, (id) => this.key(id), txIndexField, decodeIndexUnit);
    const still = missing.filter((i) => out[i] === null);
    if (still.length > 0)
      await this.ask(
        txIds,
        still,
        out,
        (id) => legacyTxIndexKey(this.prefix, id),
        (id) => id,
        (v) => v,
      );
    return out;
  }

  /** The unit of one txId, or null. */
  async lookupOne(txId: string): Promise<string | null> {
    return (await this.lookup([txId]))[0] ?? null;
  }

  /** One HMGET per key of the txIds at `positions`, filling `out` and the cache. */
  private async ask(
    txIds: readonly string[],
    positions: readonly number[],
    out: (string | null)[],
    keyOf: (txId: string) => string,
    fieldOf: (txId: string) => string | Buffer,
    decode: (value: string) => string,
  ): Promise<void> {
    if (this.many && positions.length > 1) {
      const ids = positions.map((i) => txIds[i] as string);
      const values = await this.many(ids.length, ...ids.map(keyOf), ...ids.map(fieldOf));
      positions.forEach((p, j) => this.found(ids[j] as string, values[j], p, out, decode));
      return;
    }
    const byKey = new Map<string, number[]>();
    for (const i of positions) {
      const key = keyOf(txIds[i] as string);
      const group = byKey.get(key);
      if (group) group.push(i);
      else byKey.set(key, [i]);
    }
    await Promise.all(
      [...byKey].map(async ([key, group]) => {
        const ids = group.map((i) => txIds[i] as string);
        const values = await this.redis.hmget(key, ...ids.map(fieldOf));
        group.forEach((p, j) => this.found(ids[j] as string, values[j], p, out, decode));
      }),
    );
  }

  private found(
    txId: string,
    value: string | null | undefined,
    position: number,
    out: (string | null)[],
    decode: (value: string) => string,
  ): void {
    if (value === null || value === undefined) return;
    const unit = decode(value);
    out[position] = unit;
    this.remember(txId, unit);
  }
}

type HGetMany = (numKeys: number, ...keysThenFields: (string | Buffer)[]) => Promise<(string | null)[]>;

/** `hget-many-n.lua` as a command of `redis` (defined once per client). */
function hgetManyOf(redis: RedisClient): HGetMany {
  loadLuaCommands(redis, path.join(__dirname, 'lua'));
  const client = redis as unknown as { hgetMany: HGetMany };
  return (...args) => client.hgetMany(...args);
}
