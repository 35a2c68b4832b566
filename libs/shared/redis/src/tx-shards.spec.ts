import { randomBytes } from 'node:crypto';
import { CLUSTER_SLOTS, slotRange } from './partitions';
import { ALL_TX_SHARDS, TX_SHARDS, groupByTxShard, slotOf, txShard, txShardTag } from './keys';

describe('txId shards', () => {
  it('a txId falls in the shard of its leading 6 bits; shard s of a family hashes into slots [s·256, (s+1)·256)', () => {
    expect(txShard('00'.repeat(32))).toBe(0);
    expect(txShard('03ff')).toBe(0);
    expect(txShard('04')).toBe(1);
    expect(txShard('FF'.repeat(32))).toBe(63);
    expect(() => txShard('zz')).toThrow(RangeError);
    for (const family of ['atx', 'whw']) {
      const tags = ALL_TX_SHARDS.map((s) => txShardTag('p', family, s));
      expect(new Set(tags).size).toBe(TX_SHARDS);
      tags.forEach((tag, s) => {
        const { from, to } = slotRange(s, TX_SHARDS);
        expect(to - from).toBe(CLUSTER_SLOTS / TX_SHARDS);
        expect(slotOf(`${tag}:x`)).toBeGreaterThanOrEqual(from);
        expect(slotOf(`${tag}:x`)).toBeLessThan(to);
      });
    }
  });

  it('random txIds fill the shards evenly and groupByTxShard keeps every position once', () => {
    const txIds = Array.from({ length: 6400 }, () => randomBytes(32).toString('hex'));
    const groups = groupByTxShard(txIds);
    expect(groups.size).toBe(TX_SHARDS);
    for (const positions of groups.values()) expect(positions.length).toBeGreaterThan(50);
    const all = [...groups.values()].flat().sort((a, b) => a - b);
    expect(all).toEqual(txIds.map((_, i) => i));
    for (const [shard, positions] of groups) for (const i of positions) expect(txShard(txIds[i] as string)).toBe(shard);
  });
});
