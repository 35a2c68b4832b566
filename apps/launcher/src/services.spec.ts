import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { loadConfig } from '@proofline/shared-config';
import { GRAPHQL_SEMI_SPACE, plannedApps, withGraphQLHeap } from './services';

describe('plannedApps: the GraphQL process young generation', () => {
  const config = loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' });
  const plan = (env: Record<string, string | undefined>) => plannedApps(config, env, os.tmpdir());

  it('gives only the GraphQL process a 64 MB semi-space through NODE_OPTIONS', () => {
    const plans = plan({});
    expect(plans.find((p) => p.app === 'graphql')?.env?.['NODE_OPTIONS']).toBe('--max-semi-space-size=64');
    for (const p of plans.filter((x) => x.app !== 'graphql')) expect(p.env?.['NODE_OPTIONS']).toBeUndefined();
  });

  it('keeps an inherited NODE_OPTIONS, and one that sets the size itself wins', () => {
    expect(withGraphQLHeap('--enable-source-maps')).toBe('--max-semi-space-size=64 --enable-source-maps');
    expect(withGraphQLHeap('--max-semi-space-size=32')).toBe('--max-semi-space-size=32');
    expect(withGraphQLHeap('')).toBe(GRAPHQL_SEMI_SPACE);
    expect(plan({ NODE_OPTIONS: '--enable-source-maps' }).find((p) => p.app === 'graphql')?.env?.['NODE_OPTIONS']).toBe('--max-semi-space-size=64 --enable-source-maps');
  });

  it('is a flag node accepts in NODE_OPTIONS (some V8 flags are refused there)', () => {
    const run = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.execArgv.length))'], {
      env: { PATH: process.env['PATH'] ?? '', NODE_OPTIONS: GRAPHQL_SEMI_SPACE },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const refused = spawnSync(process.execPath, ['-e', '0'], { env: { PATH: process.env['PATH'] ?? '', NODE_OPTIONS: '--cpu-prof' }, encoding: 'utf8' });
    expect(refused.status).not.toBe(0); // the check above can fail
  });
});
