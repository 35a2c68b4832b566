import { composeWhenRedisAnswers } from './topology';

describe('composeWhenRedisAnswers', () => {
  it('composes again after each failure until one succeeds, warning on the first failure only', async () => {
    const warnings: { err: string; attempt: number }[] = [];
    let calls = 0;
    const composed = await composeWhenRedisAnswers(
      async () => {
        calls += 1;
        if (calls < 3) throw new Error(`connect ECONNREFUSED (${calls})`);
        return 'app';
      },
      { stopping: () => false, warn: (fields) => warnings.push(fields), retryMs: 1 },
    );
    expect(composed).toBe('app');
    expect(calls).toBe(3);
    expect(warnings).toEqual([{ err: 'connect ECONNREFUSED (1)', attempt: 1 }]);
  });

  it('gives up with undefined once stopping, without composing again', async () => {
    let calls = 0;
    let stopping = false;
    const composed = await composeWhenRedisAnswers(
      async () => {
        calls += 1;
        stopping = true;
        throw new Error('down');
      },
      { stopping: () => stopping, warn: () => undefined, retryMs: 1 },
    );
    expect(composed).toBeUndefined();
    expect(calls).toBe(1);
  });
});
