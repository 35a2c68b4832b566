import { keyTag } from './keys';
import { slotOf } from './keys';

/** Redis Cluster's number of hash slots. */
export const CLUSTER_SLOTS = 16384;

/** The number of records partitions on a Redis Cluster when `REDIS_PARTITIONS` is unset (`resolvePartitions`). */
export const DEFAULT_PARTITIONS = 64;

/** The most partitions a deployment may have: each needs a slot range of its own. */
export const MAX_PARTITIONS = 1024;

/**
 * Number of txId → partition index buckets. Fixed: a txId's bucket is read off its first hex
 * digits, so changing it would move every index entry.
 */
export const TX_INDEX_BUCKETS = 256;

/** Half-open slot range `[from, to)`. */
export interface SlotRange {
  readonly from: number;
  readonly to: number;
}

/**
 * The slot range of part `index` of `count` equal parts of the hash-slot space:
 * `[index·16384/count, (index+1)·16384/count)`.
 */
export function slotRange(index: number, count: number): SlotRange {
  if (!Number.isInteger(count) || count < 1 || count > MAX_PARTITIONS)
    throw new RangeError(`partition count must be an integer in 1..${MAX_PARTITIONS}, got ${count}`);
  if (!Number.isInteger(index) || index < 0 || index >= count)
    throw new RangeError(`partition index must be an integer in 0..${count - 1}, got ${index}`);
  return {
    from: Math.floor((index * CLUSTER_SLOTS) / count),
    to: Math.floor(((index + 1) * CLUSTER_SLOTS) / count),
  };
}

/** unitInRange's answers: family → count → unit by index (every key of a record is built through it). */
const units = new Map<string, Map<number, (string | undefined)[]>>();

/**
 * The hash-tag unit of part `index` of `count` whose slot lies near the middle of that part's
 * slot range: the first of `<family><index>.0`, `<family><index>.1`, … whose slot is within an
 * eighth of the range's length of its middle. Deterministic (every process finds the same unit)
 * and cached. Masters own contiguous slot ranges (what `redis-cli --cluster create` and
 * rebalancing produce), so P such units spread over M equal masters ⌊P/M⌋ or ⌈P/M⌉ to a master;
 * hash tags picked at random put 9–13 of 64 on one of 6 masters. Aiming near the middle rather
 * than anywhere in the range keeps a part whose range a master boundary cuts on the side that
 * holds most of it.
 */
export function unitInRange(family: string, index: number, count: number): string {
  let byCount = units.get(family);
  if (byCount === undefined) {
    byCount = new Map();
    units.set(family, byCount);
  }
  let byIndex = byCount.get(count);
  if (byIndex === undefined) {
    byIndex = [];
    byCount.set(count, byIndex);
  }
  const cached = Number.isInteger(index) ? byIndex[index] : undefined;
  if (cached !== undefined) return cached;
  const { from, to } = slotRange(index, count);
  const middle = from + (to - from) / 2;
  const reach = Math.max(0.5, (to - from) / 8);
  // A unit's slot is the CRC16 of the unit itself (the hash tag's content), so the CRC of the
  // common `<family><index>.` is computed once and each candidate only adds its digits: the
  // search tries ~1,000 candidates for a narrow range (the index's 256 buckets), which a process
  // would otherwise pay in its first seconds of writes, once per bucket.
  const head = `${family}${index}.`;
  const headCrc = crc16(head, 0);
  for (let n = 0; ; n++) {
    const slot = crc16(String(n), headCrc) & (CLUSTER_SLOTS - 1);
    if (Math.abs(slot + 0.5 - middle) <= reach) {
      const unit = `${head}${n}`;
      // The hash tag's slot, as Redis and ioredis compute it: the same by construction.
      if (slotOf(`{${unit}}`) !== slot) throw new Error(`unitInRange: slot mismatch for ${unit}`);
      byIndex[index] = unit;
      return unit;
    }
  }
}

/** CRC16-CCITT (XMODEM), Redis Cluster's key hash, by table. */
const CRC16_TABLE = Uint16Array.from({ length: 256 }, (_, i) => {
  let crc = i << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

/** The CRC16 of ASCII `text`, continuing from `crc` (0 to start). */
function crc16(text: string, crc: number): number {
  let c = crc;
  for (let i = 0; i < text.length; i++)
    c = ((c << 8) & 0xffff) ^ (CRC16_TABLE[((c >> 8) ^ text.charCodeAt(i)) & 0xff] ?? 0);
  return c;
}

/**
 * The unit of the one partition of a deployment with `REDIS_PARTITIONS=1`: the `rec` tag every
 * record, chain, the outbox and the funding pool shared before partitions, so such a deployment
 * keeps that layout as it is (and needs no txId index: every record is in it).
 */
export const SINGLE_PARTITION_UNIT = 'rec';

/**
 * The hash-tag unit of records partition `index` of `count` (`r<index>.<n>`;
 * {@link SINGLE_PARTITION_UNIT} when `count` is 1).
 */
export function partitionUnit(index: number, count: number): string {
  if (count === 1 && index === 0) return SINGLE_PARTITION_UNIT;
  return unitInRange('r', index, count);
}

/** The hash-tag unit of the txId → partition index bucket holding `txId` (`ix<bucket>.<n>`). */
export function txIndexUnit(txId: string): string {
  return unitInRange('ix', txIndexBucket(txId), TX_INDEX_BUCKETS);
}

/** The index bucket of a txId (hex): its first two hex digits, so buckets fill evenly. */
export function txIndexBucket(txId: string): number {
  // Read digit by digit: this runs for every index read and write.
  const hi = hexDigit(txId.charCodeAt(0));
  const lo = hexDigit(txId.charCodeAt(1));
  if (hi < 0 || lo < 0) throw new RangeError(`not a hex txId: ${JSON.stringify(txId.slice(0, 16))}`);
  return (hi * 16 + lo) % TX_INDEX_BUCKETS;
}

/** The value of a hex digit's character code, or -1. */
function hexDigit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  if (code >= 97 && code <= 102) return code - 87; // a-f
  if (code >= 65 && code <= 70) return code - 55; // A-F
  return -1;
}

/**
 * The partition counts a deployment has run with (docs/redis-cluster.md, "Growing the partition
 * count"), as a process knows them: its own, and every other one the layout registry
 * ({@link joinPartitionLayouts}) showed it. Counts are only ever added: a partition, once used,
 * holds records (and chains that keep growing there) for good. Shared by the `Partitions` of one
 * composition (the funding pool's, the records store's), so one registry read updates them all.
 */
export class PartitionLayouts {
  private readonly counts = new Set<number>();
  private revisionNo = 0;

  /** Adds `count` (validated); true when it was new. */
  add(count: number): boolean {
    slotRange(0, count);
    if (this.counts.has(count)) return false;
    this.counts.add(count);
    this.revisionNo += 1;
    return true;
  }

  /** Every count known, ascending. */
  get all(): number[] {
    return [...this.counts].sort((a, b) => a - b);
  }

  /** Bumped by every count added. */
  get revision(): number {
    return this.revisionNo;
  }
}

/**
 * The records partitions of a deployment. A partition holds its records, their transactions and
 * chains, its outbox and its shard of the funding pool (docs/redis-cluster.md, "Partitions"); its
 * keys start with `tag(i)`.
 *
 * `count` is this process's own layout (`REDIS_PARTITIONS`): `next()` hands roots (independent
 * records, linked creates) out round robin over its partitions, starting at a random one so that
 * processes started together do not march in step. `units` is every *live* partition: the own
 * layout's first (indices `0..count-1`), then those of every other layout in `layouts` (a
 * deployment that grew P online: their chains, outboxes and funding shards stay where they are).
 * Whatever iterates partitions (sweeper, sums, upkeep) iterates `units`; the list only grows, so
 * an index read off it stays valid. With one partition (`rec`, no txId index) other layouts are
 * ignored: 1 → P is the offline `redis migrate-keys`.
 */
export class Partitions {
  /** The partition counts this instance follows (shared with the other instances of its composition). */
  readonly layouts: PartitionLayouts;
  private readonly ownUnits: readonly string[];
  private live: string[];
  private liveOf = -1;
  private cursor: number;

  constructor(
    readonly prefix: string,
    readonly count: number = DEFAULT_PARTITIONS,
    start: number = Math.floor(Math.random() * count),
    layouts: PartitionLayouts = new PartitionLayouts(),
  ) {
    slotRange(0, count); // validates count
    this.ownUnits = Array.from({ length: count }, (_, i) => partitionUnit(i, count));
    this.live = [...this.ownUnits];
    this.layouts = layouts;
    if (count > 1) layouts.add(count);
    this.cursor = ((start % count) + count) % count;
  }

  /** Every live partition's unit, by index: the own layout's first, then the other layouts' (append only). */
  get units(): readonly string[] {
    if (this.single || this.liveOf === this.layouts.revision) return this.live;
    const known = new Set(this.live);
    for (const count of this.layouts.all) {
      if (count === 1) continue;
      for (let i = 0; i < count; i++) {
        const unit = partitionUnit(i, count);
        if (known.has(unit)) continue;
        known.add(unit);
        this.live.push(unit);
      }
    }
    this.liveOf = this.layouts.revision;
    return this.live;
  }

  /** The own layout's units (where roots go). */
  get own(): readonly string[] {
    return this.ownUnits;
  }

  /** The unit of live partition `index` (`0..count-1`: the own layout's). */
  unit(index: number): string {
    const unit = (index < this.count ? this.ownUnits : this.units)[index];
    if (unit === undefined) throw new RangeError(`no partition ${index} of ${this.units.length}`);
    return unit;
  }

  /** `<prefix>:{<unit>}`: the first part of every key of partition `index`. */
  tag(index: number): string {
    return keyTag(this.prefix, this.unit(index));
  }

  /** The next partition of the own layout for a root, round robin. */
  next(): number {
    const index = this.cursor;
    this.cursor = (this.cursor + 1) % this.count;
    return index;
  }

  /** True when the deployment has one partition, `rec`: no txId index is kept or read. */
  get single(): boolean {
    return this.count === 1;
  }

  /** The index of a live unit, or -1 (a unit of no layout this process knows). */
  indexOf(unit: string): number {
    return this.units.indexOf(unit);
  }
}
