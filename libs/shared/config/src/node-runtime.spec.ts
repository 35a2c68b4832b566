import { reusePortProblem, supportsReusePort } from './node-runtime';

describe('reusePort support by Node version', () => {
  it('starts at 22.12 on the 22 line and 23.1 on the 23 line', () => {
    expect(['20.20.2', 'v22.11.0', '22.0.0', '23.0.0'].map((v) => supportsReusePort(v))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(['22.12.0', 'v22.21.1', '23.1.0', '24.0.0', 'v24.21.0', '26.1.0'].map((v) => supportsReusePort(v))).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it('refuses several API processes on an older Node with a line naming the version; one process runs anywhere', () => {
    expect(reusePortProblem(2, 'v20.20.2')).toBe(
      'API_PROCESSES=2 needs Node >= 22.12 (listen with reusePort, SO_REUSEPORT); this is Node v20.20.2: use Node 24 LTS, or set API_PROCESSES=1',
    );
    expect(reusePortProblem(1, 'v20.20.2')).toBeUndefined();
    expect(reusePortProblem(4, 'v24.21.0')).toBeUndefined();
  });
});
