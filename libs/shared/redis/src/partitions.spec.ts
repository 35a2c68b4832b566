import { randomBytes } from 'node:crypto';
import {
  PartitionIndex,
  TX_INDEX_SUB_BUCKETS,
  decodeIndexUnit,
  encodeIndexUnit,
  legacyTxIndexKey,
  txIndexField,
  txIndexKey,
} from './partition-index';
import {
  CLUSTER_SLOTS,
  Partitions,
  TX_INDEX_BUCKETS,
  partitionUnit,
  slotRange,
  txIndexBucket,
  txIndexUnit,
  unitInRange,
} from './partitions';
import { isClusterClient } from './connection';
import { slotOf } from './keys';
import { testClient, testScope } from './testing/test-redis';

/** The master owning `slot` when `masters` equal masters split the slots as `redis-cli --cluster create` does. */
function masterOf(slot: number, masters: number): number {
  for (let m = 0; m < masters; m++) {
    const to = m === masters - 1 ? CLUSTER_SLOTS : Math.floor(((m + 1) * CLUSTER_SLOTS) / masters);
    if (slot < to) return m;
  }
  throw new Error(`slot ${slot} out of range`);
}

function spread(slots: readonly number[], masters: number): number[] {
  const counts = new Array<number>(masters).fill(0);
  for (const slot of slots) counts[masterOf(slot, masters)] = (counts[masterOf(slot, masters)] ?? 0) + 1;
  return counts;
}

describe('partitions', () => {
  it('partition i of P hashes into the slots [i·16384/P, (i+1)·16384/P), the same in every process', () => {
    for (const count of [1, 3, 64, 100, 1024]) {
      const partitions = new Partitions('p', count);
      expect(new Set(partitions.units).size).toBe(count);
      partitions.units.forEach((unit, i) => {
        const { from, to } = slotRange(i, count);
        const slot = slotOf(`{${unit}}`);
        expect(slot).toBeGreaterThanOrEqual(from);
        expect(slot).toBeLessThan(to);
        expect(slotOf(`${partitions.tag(i)}:records:rec:${'ab'.repeat(32)}`)).toBe(slot);
      });
    }
    // Deterministic: names fixed by the search, not by chance or process.
    expect(partitionUnit(0, 64)).toBe(partitionUnit(0, 64));
    expect(partitionUnit(5, 64)).toMatch(/^r5\.\d+$/);
    expect(new Partitions('p', 64).tag(5)).toBe(`p:{${partitionUnit(5, 64)}}`);
    // One partition is the layout from before partitions: everything under {rec}.
    expect(new Partitions('p', 1).tag(0)).toBe('p:{rec}');
  });

  it('64 partitions spread 21/22/21 over 3 equal masters and 10–11 over 6 (random tags: 9–13)', () => {
    const slots = new Partitions('p', 64).units.map((u) => slotOf(`{${u}}`));
    expect(spread(slots, 3)).toEqual([21, 22, 21]);
    const six = spread(slots, 6);
    expect(six.reduce((a, b) => a + b, 0)).toBe(64);
    for (const n of six) expect([10, 11]).toContain(n);
    // Any P over 3 and 6 masters: each master holds ⌊P/M⌋ or ⌈P/M⌉ partitions.
    for (const count of [6, 12, 32, 48, 96, 128, 256]) {
      const ps = new Partitions('p', count).units.map((u) => slotOf(`{${u}}`));
      for (const masters of [3, 6]) {
        for (const n of spread(ps, masters)) {
          expect(n).toBeGreaterThanOrEqual(Math.floor(count / masters));
          expect(n).toBeLessThanOrEqual(Math.ceil(count / masters));
        }
      }
    }
  });

  it('next() hands partitions out round robin from where it starts', () => {
    const partitions = new Partitions('p', 4, 2);
    expect([1, 2, 3, 4, 5].map(() => partitions.next())).toEqual([2, 3, 0, 1, 2]);
    expect(partitions.indexOf(partitions.unit(3))).toBe(3);
    expect(partitions.indexOf('rec')).toBe(-1);
    expect(() => partitions.unit(4)).toThrow(RangeError);
    expect(() => new Partitions('p', 0)).toThrow(RangeError);
    expect(() => new Partitions('p', 1025)).toThrow(RangeError);
  });

  it('index buckets spread by txId over slot ranges of their own', () => {
    expect(txIndexBucket('00ff')).toBe(0);
    expect(txIndexBucket('ff00')).toBe(255);
    expect(() => txIndexBucket('zz')).toThrow(RangeError);
    const slots = Array.from({ length: TX_INDEX_BUCKETS }, (_, b) =>
      slotOf(`{${txIndexUnit(b.toString(16).padStart(2, '0') + '00')}}`),
    );
    expect(new Set(slots).size).toBe(TX_INDEX_BUCKETS);
    for (const n of spread(slots, 3)) expect(n).toBeGreaterThanOrEqual(85);
  });
});

describe('PartitionIndex', () => {
  const { prefix, redis, cleanup } = testScope('pix');
  afterAll(cleanup);

  it('stores txId → unit in its bucket and answers batches in order, grouped by bucket, cached', async () => {
    const writer = new PartitionIndex(redis, prefix);
    const ids = Array.from({ length: 40 }, () => randomBytes(32).toString('hex'));
    await Promise.all(ids.map((id, i) => writer.store(id, `r${i % 4}.0`)));
    // Stored where a reader in another process finds it.
    const first = ids[0] as string;
    // Raw txId bytes after the first → the unit as an integer (n · 1024 + index).
    expect(await redis.hget(txIndexKey(prefix, first), txIndexField(first))).toBe('0');
    expect(await redis.hget(txIndexKey(prefix, ids[1] as string), txIndexField(ids[1] as string))).toBe('1');

    // A reader on a client of its own without auto-pipelining (an auto-pipeline copies a client's
    // script commands, so it would call the spies below again), and the commands it sends: an
    // HMGET by its key, a hget-many-n.lua call by its key count.
    const own = testClient({ enableAutoPipelining: false });
    const reader = new PartitionIndex(own, prefix);
    const unknown = randomBytes(32).toString('hex');
    const calls: string[] = [];
    const client = own as unknown as Record<'hmget' | 'hgetMany', (...a: unknown[]) => unknown>;
    const { hmget, hgetMany } = client;
    client.hmget = (...a: unknown[]) => (calls.push(String(a[0])), hmget.apply(own, a));
    if (hgetMany) client.hgetMany = (...a: unknown[]) => (calls.push(`many:${String(a[0])}`), hgetMany.apply(own, a));
    try {
      expect(await reader.lookup([...ids, unknown])).toEqual([...ids.map((_, i) => `r${i % 4}.0`), null]);
      // On a cluster one HMGET per index key (their slots differ), on one Redis one script call
      // for all 41; then the miss in the form from before sub-buckets.
      const keys = new Set([...ids, unknown].map((id) => txIndexKey(prefix, id))).size;
      expect(calls).toEqual([
        ...(isClusterClient(redis) ? Array.from({ length: keys }, () => expect.any(String)) : ['many:41']),
        legacyTxIndexKey(prefix, unknown),
      ]);
      calls.length = 0;
      // Found entries are cached; a miss is asked again (the record may be written later).
      expect(await reader.lookup([first, unknown])).toEqual(['r0.0', null]);
      expect(calls).toEqual([txIndexKey(prefix, unknown), legacyTxIndexKey(prefix, unknown)]);
    } finally {
      client.hmget = hmget;
      if (hgetMany) client.hgetMany = hgetMany;
    }
    await writer.store(unknown, 'r9.1');
    expect(await reader.lookupOne(unknown)).toBe('r9.1');
    await own.quit();
  });

  it('encodes partition units as integers, independent of the partition count, and other units as they are', () => {
    for (const unit of ['r0.0', 'r12.5', 'r1023.77', 'rec', 'r1024.0', 'r01.2', 'x3.1'])
      expect(decodeIndexUnit(encodeIndexUnit(unit))).toBe(unit);
    expect(encodeIndexUnit('r12.5')).toBe(String(5 * 1024 + 12));
    expect(encodeIndexUnit('rec')).toBe('rec');
  });

  it('reads entries of the index written before sub-buckets (txId hex → unit, one hash a bucket)', async () => {
    const old = randomBytes(32).toString('hex');
    await redis.hset(legacyTxIndexKey(prefix, old), old, 'r7.3');
    const reader = new PartitionIndex(redis, prefix);
    expect(await reader.lookup([old, randomBytes(32).toString('hex')])).toEqual(['r7.3', null]);
    expect(reader.cached(old)).toBe('r7.3');
  });

  it('keeps each index key a listpack of ~36 B an entry at 100 entries a key', async () => {
    // 100 txIds in one sub-bucket: same first byte and third hex digit.
    const p = `${prefix}-lp`;
    const index = new PartitionIndex(redis, p);
    const ids = Array.from({ length: 100 }, () => 'ab5' + randomBytes(32).toString('hex').slice(3));
    await Promise.all(ids.map((id, i) => index.store(id, `r${i % 64}.${i % 3}`)));
    const key = txIndexKey(p, ids[0] as string);
    expect(new Set(ids.map((id) => txIndexKey(p, id))).size).toBe(1);
    expect(key.endsWith(`:pix:${5 % TX_INDEX_SUB_BUCKETS}`)).toBe(true);
    expect(await redis.hlen(key)).toBe(100);
    expect(await redis.object('ENCODING', key)).toBe('listpack');
    const bytes = Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    expect(bytes / 100).toBeLessThan(45);
    await redis.del(key);
  });
});

describe('unitInRange: the same units as the plain search, whatever the speed-up', () => {
  /** The definition: the first `<family><index>.<n>` whose slot is within reach of its range's middle. */
  function plainSearch(family: string, index: number, count: number): string {
    const { from, to } = slotRange(index, count);
    const middle = from + (to - from) / 2;
    const reach = Math.max(0.5, (to - from) / 8);
    for (let n = 0; ; n++) {
      const unit = `${family}${index}.${n}`;
      if (Math.abs(slotOf(`{${unit}}`) + 0.5 - middle) <= reach) return unit;
    }
  }

  it('names every index bucket, 64 partitions and a txId shard family exactly as stored keys already use them', () => {
    // Stored keys carry these names: a change would hide every record's index entry.
    expect([txIndexUnit('00'), txIndexUnit('ff'), partitionUnit(1, 64), unitInRange('atx', 5, 64)]).toEqual([
      'ix0.179',
      'ix255.399',
      'r1.757',
      'atx5.206',
    ]);
    for (let b = 0; b < TX_INDEX_BUCKETS; b++)
      expect(unitInRange('ix', b, TX_INDEX_BUCKETS)).toBe(plainSearch('ix', b, TX_INDEX_BUCKETS));
    for (const count of [1, 3, 64, 1024])
      for (const i of [0, Math.floor(count / 2), count - 1])
        expect(unitInRange('r', i, count)).toBe(plainSearch('r', i, count));
  });
});
