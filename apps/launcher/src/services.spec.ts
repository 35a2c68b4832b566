import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '@proofline/shared-config';
import { GRAPHQL_SEMI_SPACE, copyEnv, loopbackFor, plannedApps, profileArgs, withGraphQLHeap } from './services';
import type { AppPlan } from './services';

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
    expect(plan({ NODE_OPTIONS: '--enable-source-maps' }).find((p) => p.app === 'graphql')?.env?.['NODE_OPTIONS']).toBe(
      '--max-semi-space-size=64 --enable-source-maps',
    );
  });

  it('is a flag node accepts in NODE_OPTIONS (some V8 flags are refused there)', () => {
    const run = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.execArgv.length))'], {
      env: { PATH: process.env['PATH'] ?? '', NODE_OPTIONS: GRAPHQL_SEMI_SPACE },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const refused = spawnSync(process.execPath, ['-e', '0'], {
      env: { PATH: process.env['PATH'] ?? '', NODE_OPTIONS: '--print' },
      encoding: 'utf8',
    });
    expect(refused.status).not.toBe(0); // the check above can fail
  });
});

describe('plannedApps: ARC callbacks with the launcher’s own devnet', () => {
  const config = loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', PORT: '3456' });
  let dist: string;
  beforeAll(() => {
    dist = fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-dist-'));
    fs.mkdirSync(path.join(dist, 'apps', 'devnet'), { recursive: true });
    fs.writeFileSync(path.join(dist, 'apps', 'devnet', 'main.js'), '');
  });
  afterAll(() => fs.rmSync(dist, { recursive: true, force: true }));
  const envOf = (plans: AppPlan[], app: string) => plans.find((p) => p.app === app)?.env ?? {};

  it('points the API, the GraphQL app and the workers at the API’s /arc/callback with one fresh token', () => {
    const plans = plannedApps(config, {}, dist);
    expect(plans.map((p) => p.app)).toEqual(['devnet', 'api', 'graphql', 'worker']);
    const api = envOf(plans, 'api');
    expect(api['ARC_CALLBACK_URL']).toBe('http://127.0.0.1:3456/arc/callback');
    expect(api['ARC_CALLBACK_TOKEN']).toMatch(/^[0-9a-f]{48}$/);
    for (const app of ['graphql', 'worker']) {
      expect(envOf(plans, app)['ARC_CALLBACK_URL']).toBe(api['ARC_CALLBACK_URL']);
      expect(envOf(plans, app)['ARC_CALLBACK_TOKEN']).toBe(api['ARC_CALLBACK_TOKEN']);
    }
    expect(envOf(plans, 'devnet')['ARC_CALLBACK_TOKEN']).toBeUndefined();
    // A new token on every start: a token from an earlier run is worthless.
    expect(envOf(plannedApps(config, {}, dist), 'api')['ARC_CALLBACK_TOKEN']).not.toBe(api['ARC_CALLBACK_TOKEN']);
    // The configuration the apps will load from it is valid.
    const loaded = loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', ...api });
    expect(loaded.chain.arcCallbackUrl).toBe('http://127.0.0.1:3456/arc/callback');
    expect(loaded.chain.callbackGraceMs).toBe(30_000);
  });

  it('keeps callbacks the user configured, and sets none for an external ARC', () => {
    const own = { ARC_CALLBACK_URL: 'https://proofline.example.com/arc/callback', ARC_CALLBACK_TOKEN: 'x'.repeat(32) };
    expect(envOf(plannedApps(config, own, dist), 'worker')['ARC_CALLBACK_URL']).toBeUndefined();
    const external = plannedApps(config, { ARC_URL: 'https://arc.example.com' }, dist);
    expect(external.map((p) => p.app)).toEqual(['api', 'graphql', 'worker']);
    expect(envOf(external, 'worker')['ARC_CALLBACK_URL']).toBeUndefined();
  });

  it('reaches an API bound to one address on that address', () => {
    expect(loopbackFor('0.0.0.0')).toBe('127.0.0.1');
    expect(loopbackFor('::')).toBe('127.0.0.1');
    expect(loopbackFor('10.1.2.3')).toBe('10.1.2.3');
    expect(loopbackFor('fd00::5')).toBe('[fd00::5]');
    const bound = loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', PORT: '3456', HOST: '10.1.2.3' });
    expect(envOf(plannedApps(bound, {}, dist), 'api')['ARC_CALLBACK_URL']).toBe('http://10.1.2.3:3456/arc/callback');
  });
});

describe('plannedApps: API_PROCESSES independent API processes', () => {
  it('plans one API copy per API_PROCESSES, each with its own metrics port (METRICS_PORT + N - 1)', () => {
    const plans = plannedApps(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', API_PROCESSES: '3' }), {}, os.tmpdir());
    const api = plans.find((p) => p.app === 'api');
    expect(api?.copies).toBe(3);
    const env = { METRICS_PORT: '9100', WORKER_METRICS_PORT: '9464' };
    expect([0, 1, 2].map((i) => copyEnv(api as AppPlan, i, env))).toEqual([
      { METRICS_PORT: '9100' },
      { METRICS_PORT: '9101' },
      { METRICS_PORT: '9102' },
    ]);
    const worker = plans.find((p) => p.app === 'worker') as AppPlan;
    expect(copyEnv(worker, 1, env)).toEqual({ WORKER_METRICS_PORT: '9465' });
    // Without the variable every copy serves its figures on its public port: nothing to add.
    expect(copyEnv(api as AppPlan, 1, {})).toEqual({});
    expect(copyEnv(plans.find((p) => p.app === 'graphql') as AppPlan, 1, env)).toEqual({});
  });
});

describe('profileArgs: PROFILE_APPS runs named processes under --cpu-prof', () => {
  it('names processes one by one, or all; nothing by default', () => {
    expect(profileArgs('api', {})).toEqual([]);
    expect(profileArgs('api', { PROFILE_APPS: 'devnet, api' })).toEqual([
      '--cpu-prof',
      `--cpu-prof-dir=${path.join('.data', 'profiles')}`,
    ]);
    expect(profileArgs('worker-1', { PROFILE_APPS: 'api' })).toEqual([]);
    // An app's name selects each of its copies; a copy's name only that one.
    expect(profileArgs('api-2', { PROFILE_APPS: 'api,worker', PROFILE_DIR: '/tmp/p' })).toEqual([
      '--cpu-prof',
      '--cpu-prof-dir=/tmp/p',
    ]);
    expect(profileArgs('worker-1', { PROFILE_APPS: 'api,worker', PROFILE_DIR: '/tmp/p' })).toHaveLength(2);
    expect(profileArgs('worker-2', { PROFILE_APPS: 'worker-1' })).toEqual([]);
    expect(profileArgs('worker-2', { PROFILE_APPS: 'all', PROFILE_DIR: '/tmp/p' })).toEqual([
      '--cpu-prof',
      '--cpu-prof-dir=/tmp/p',
    ]);
  });
});
