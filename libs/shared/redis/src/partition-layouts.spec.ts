import { randomBytes } from 'node:crypto';
import { deleteByPrefix } from './connection';
import type { RedisClient } from './connection';
import { sharedKeys } from './keys';
import { joinPartitionLayouts, readPartitionLayouts, refuseOnePartitionOverLayouts } from './partition-layouts';
import { PartitionLayouts, Partitions, partitionUnit } from './partitions';
import { testClient } from './testing/test-redis';

const units = (count: number) => Array.from({ length: count }, (_, i) => partitionUnit(i, count));

describe('Partitions over several layouts', () => {
  it('units: the own layout first, then every other layout’s, append only; roots stay in the own layout', () => {
    const layouts = new PartitionLayouts();
    const p = new Partitions('p', 16, 0, layouts);
    expect(p.units).toEqual(units(16));
    const before = [...p.units];
    expect(layouts.add(8)).toBe(true);
    expect(layouts.add(8)).toBe(false);
    const live = new Set([...units(16), ...units(8)]);
    expect(new Set(p.units)).toEqual(live);
    expect(p.units.slice(0, 16)).toEqual(before);
    expect(p.own).toEqual(units(16));
    // A larger layout added later goes after, the earlier indices unchanged.
    const withEight = [...p.units];
    layouts.add(32);
    expect(p.units.slice(0, withEight.length)).toEqual(withEight);
    expect(new Set(p.units)).toEqual(new Set([...live, ...units(32)]));
    // Round robin over the own 16 only; any live index resolves.
    expect(Array.from({ length: 17 }, () => p.next())).toEqual([...Array.from({ length: 16 }, (_, i) => i), 0]);
    const last = p.units.length - 1;
    expect(p.unit(last)).toBe(p.units[last]);
    expect(p.indexOf(units(8)[3] as string)).toBeGreaterThanOrEqual(16);
    expect(() => p.unit(p.units.length)).toThrow(RangeError);
    // A second instance of the composition (the records store beside the pool) follows the same layouts.
    const store = new Partitions('p', 16, 5, layouts);
    expect(store.units).toEqual(p.units);
  });

  it('one partition ignores other layouts (it keeps no txId index: 1 → P is migrate-keys)', () => {
    const layouts = new PartitionLayouts();
    const one = new Partitions('p', 1, 0, layouts);
    layouts.add(8);
    expect(one.units).toEqual(['rec']);
    expect(layouts.all).toEqual([8]);
  });
});

describe('layout registry', () => {
  const prefix = `play-${randomBytes(5).toString('hex')}`;
  let redis: RedisClient;

  beforeAll(() => {
    redis = testClient();
  });
  afterAll(async () => {
    await deleteByPrefix(redis, prefix);
    await redis.quit();
  });

  it('processes starting together register their counts once each and all end up knowing every one', async () => {
    const compositions = [8, 8, 16, 16, 8, 32].map((count) => {
      const layouts = new PartitionLayouts();
      return { count, layouts, partitions: new Partitions(prefix, count, 0, layouts) };
    });
    const watches = compositions.map((c) => joinPartitionLayouts(redis, prefix, c.count, c.layouts, { everyMs: 50 }));
    try {
      await Promise.all(watches.map((w) => w.ready));
      expect(await readPartitionLayouts(redis, prefix)).toEqual([8, 16, 32]);
      expect(await redis.scard(sharedKeys(prefix).partitionLayouts)).toBe(3);
      // Those that registered first learn the later ones on their next refresh.
      await Promise.all(watches.map((w) => w.refresh()));
      for (const c of compositions) {
        expect(c.layouts.all).toEqual([8, 16, 32]);
        expect(new Set(c.partitions.units)).toEqual(new Set([...units(8), ...units(16), ...units(32)]));
        expect(c.partitions.own).toEqual(units(c.count));
      }
      // A smaller layout started later (shrinking P) is one more layout: nothing is dropped.
      const later = new PartitionLayouts();
      const small = new Partitions(prefix, 4, 0, later);
      const w = joinPartitionLayouts(redis, prefix, 4, later, { everyMs: 0 });
      await w.ready;
      expect(later.all).toEqual([4, 8, 16, 32]);
      expect(small.own).toEqual(units(4));
      // The others see it on their timer.
      const first = compositions[0] as (typeof compositions)[number];
      const deadline = Date.now() + 5000;
      while (!first.layouts.all.includes(4) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(first.layouts.all).toEqual([4, 8, 16, 32]);
    } finally {
      for (const w of watches) w.stop();
    }
  });

  it('one partition registers nothing and refuses to run over a partitioned deployment', async () => {
    const fresh = `${prefix}-one`;
    const layouts = new PartitionLayouts();
    await joinPartitionLayouts(redis, fresh, 1, layouts).ready;
    expect(await redis.exists(sharedKeys(fresh).partitionLayouts)).toBe(0);
    await expect(refuseOnePartitionOverLayouts(redis, fresh, 1)).resolves.toBeUndefined();
    await expect(refuseOnePartitionOverLayouts(redis, prefix, 1)).rejects.toThrow(
      /REDIS_PARTITIONS=1, but this deployment has run with 4, 8, 16, 32 partitions/,
    );
    await expect(refuseOnePartitionOverLayouts(redis, prefix, 8)).resolves.toBeUndefined();
  });

  it('a registry that cannot be read is retried on the next tick, never thrown at the caller', async () => {
    const errors: Error[] = [];
    const broken = `${prefix}-broken`;
    await redis.set(sharedKeys(broken).partitionLayouts, 'not a set');
    const w = joinPartitionLayouts(redis, broken, 8, new PartitionLayouts(), {
      everyMs: 0,
      onError: (err) => errors.push(err),
    });
    await expect(w.ready).resolves.toBeUndefined();
    expect(errors[0]?.message).toMatch(/WRONGTYPE|unexpected/);
    await redis.del(sharedKeys(broken).partitionLayouts);
    await w.refresh();
    expect(await readPartitionLayouts(redis, broken)).toEqual([8]);
  });
});
