import { groupBySlot, keyTag, readBySlot, slotOf } from './keys';

describe('slots', () => {
  it('slotOf hashes only the {tag}: every key of one keyTag shares its slot', () => {
    // Redis' CLUSTER KEYSLOT values.
    expect(slotOf('foo')).toBe(12182);
    expect(slotOf('{user1000}.following')).toBe(slotOf('{user1000}.followers'));
    const rec = keyTag('p', 'rec');
    expect(slotOf(`${rec}:records:rec:${'a'.repeat(64)}`)).toBe(slotOf(`${rec}:wallet:free`));
    expect(slotOf(`${keyTag('p', 'rec')}:x`)).not.toBe(slotOf(`${keyTag('p', 'arc')}:x`));
  });

  it('groupBySlot keeps the first-seen order of slots and ascending positions within each', () => {
    const a = `${keyTag('p', 'a')}:`;
    const b = `${keyTag('p', 'b')}:`;
    expect(groupBySlot([`${a}1`, `${b}1`, `${a}2`, `${b}2`, `${a}3`])).toEqual([
      [0, 2, 4],
      [1, 3],
    ]);
    expect(groupBySlot([])).toEqual([]);
  });

  it('readBySlot calls once per slot and puts every value back at its key position', async () => {
    const a = `${keyTag('p', 'a')}:`;
    const b = `${keyTag('p', 'b')}:`;
    const calls: string[][] = [];
    const out = await readBySlot([`${a}1`, `${b}2`, `${a}3`], async (keys) => {
      calls.push(keys);
      return keys.map((k) => k.slice(-1));
    });
    expect(out).toEqual(['1', '2', '3']);
    expect(calls).toEqual([[`${a}1`, `${a}3`], [`${b}2`]]);
    await expect(readBySlot([`${a}1`], async () => [])).rejects.toThrow('answered 0 values');
  });
});
