import { confirmedBlocks } from './block';

describe('confirmedBlocks', () => {
  it('is tip height − block height + 1', () => {
    expect(confirmedBlocks(100, 100)).toBe(1);
    expect(confirmedBlocks(105, 100)).toBe(6);
  });

  it('counts a proven block above the stored tip (the tip lags the callbacks) as the tip, never 0 or negative', () => {
    expect(confirmedBlocks(96, 100)).toBe(1);
    expect(confirmedBlocks(-1, 0)).toBe(1);
  });
});
