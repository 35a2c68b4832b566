import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '@proofline/shared-config';

/**
 * One app the launcher runs: `copies` processes of the compiled bundle dist/apps/<app>/main.js.
 * Adding an app to `npm start` is one entry in {@link plannedApps}.
 */
export interface AppPlan {
  /** Log name; copies are named `<name>-1`, `<name>-2`, … when there is more than one. */
  readonly name: string;
  /** Directory under dist/apps (and apps/) of the app's bundle. */
  readonly app: string;
  readonly copies: number;
  /** Variables added to this app's environment (the launcher's own environment is inherited). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * `infrastructure` apps (the devnet node) start before the others, which wait for `readyUrl`
   * to answer 2xx, and stop after them; default `app`.
   */
  readonly stage?: 'infrastructure' | 'app';
  /** Polled (GET) until it answers 2xx before the `app` stage starts. */
  readonly readyUrl?: string;
}

/**
 * The apps `npm start` runs, in start order. `callbackToken` is the ARC callback token the
 * launcher hands its own devnet and apps (default: 24 random bytes, new on every start).
 */
export function plannedApps(
  config: Config,
  env: Record<string, string | undefined>,
  distDir: string,
  callbackToken: string = randomBytes(24).toString('hex'),
): AppPlan[] {
  // The local ARC-compatible devnet (apps/devnet) on NETWORK=devnet, unless ARC_URL names an
  // external ARC: then every other app publishes to it and checks proofs against its headers.
  const devnet = config.network === 'devnet' && !env['ARC_URL'] && hasBundle(distDir, 'devnet');
  const devnetUrl = `http://127.0.0.1:${config.devnet.port}`;
  const chainEnv: Record<string, string> = devnet ? { ARC_URL: devnetUrl, HEADERS_URL: devnetUrl } : {};
  if (devnet && config.devnet.apiKey !== undefined && !env['ARC_API_KEY'])
    chainEnv['ARC_API_KEY'] = config.devnet.apiKey;
  // ARC callbacks on by default with the launcher's own devnet: the node reports MINED (with the
  // BUMP) to the API's POST /arc/callback, so the confirmation pass polls only what a callback did
  // not prove within ARC_CALLBACK_GRACE_MS. Callbacks configured by the user are kept as they are.
  if (devnet && !env['ARC_CALLBACK_URL'] && !env['ARC_CALLBACK_TOKEN']) {
    chainEnv['ARC_CALLBACK_URL'] = `http://${loopbackFor(config.host)}:${config.port}/arc/callback`;
    chainEnv['ARC_CALLBACK_TOKEN'] = callbackToken;
  }
  const plans: AppPlan[] = [
    {
      name: 'devnet',
      app: 'devnet',
      copies: devnet ? 1 : 0,
      stage: 'infrastructure',
      readyUrl: `${devnetUrl}/liveness`,
    },
    // API_PROCESSES independent processes on one port (reusePort): each is restarted alone.
    { name: 'api', app: 'api', copies: config.apiProcesses, env: chainEnv },
    {
      name: 'graphql',
      app: 'graphql',
      copies: 1,
      env: { ...chainEnv, NODE_OPTIONS: withGraphQLHeap(env['NODE_OPTIONS']) },
    },
    { name: 'worker', app: 'worker', copies: config.workers, env: chainEnv },
  ];
  return plans.filter((p) => p.copies > 0);
}

/**
 * V8's young generation for the GraphQL process: a 1,000-record traversal allocates tens of MB of
 * short-lived objects (execution paths, promises, a ~2 MiB response), which the default 16 MB
 * semi-space turns into a scavenge every few ms. A 64 MB semi-space cuts the traversal's CPU time
 * (docs/performance-log.md). An inherited NODE_OPTIONS is kept; one that sets the size itself wins.
 */
export const GRAPHQL_SEMI_SPACE = '--max-semi-space-size=64';
export function withGraphQLHeap(inherited: string | undefined): string {
  if (inherited?.includes('--max-semi-space-size')) return inherited;
  return inherited ? `${GRAPHQL_SEMI_SPACE} ${inherited}` : GRAPHQL_SEMI_SPACE;
}

/**
 * Variables of copy `index` (0-based) of an app. Copies share a machine, so each serves its
 * metrics on its own port: `WORKER_METRICS_PORT` + index for a worker, `METRICS_PORT` + index for
 * an API process (they share the public port, not the internal one).
 */
export function copyEnv(plan: AppPlan, index: number, env: Record<string, string | undefined>): Record<string, string> {
  const variable = { worker: 'WORKER_METRICS_PORT', api: 'METRICS_PORT' }[plan.app];
  if (variable === undefined || !env[variable]) return {};
  const base = Number(env[variable]);
  return Number.isInteger(base) && base > 0 ? { [variable]: String(base + index) } : {};
}

export function bundlePath(distDir: string, app: string): string {
  return path.join(distDir, 'apps', app, 'main.js');
}

/** The address the devnet reaches the API on: loopback when the API listens on every interface or on loopback. */
export function loopbackFor(host: string): string {
  if (['0.0.0.0', '::', '', 'localhost', '127.0.0.1', '::1'].includes(host)) return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function hasBundle(distDir: string, app: string): boolean {
  return fs.existsSync(bundlePath(distDir, app));
}

/**
 * Profiling the stack as users run it (a development aid, docs/performance.md): with
 * `PROFILE_APPS` (comma-separated process or app names: `api`, `devnet`, `worker`, `worker-1`, …
 * or `all`) those processes run under `node --cpu-prof`, writing a .cpuprofile into `PROFILE_DIR`
 * (default `.data/profiles`) when they exit cleanly. Node before 23 refuses `--cpu-prof` in
 * NODE_OPTIONS, hence the argument. An app run in several copies names its processes `api-1`,
 * `api-2`, … (`api` when there is one): its app name (`api`, `worker`) selects every copy, a
 * process name only that one.
 */
export function profileArgs(name: string, env: Record<string, string | undefined>): string[] {
  const wanted = (env['PROFILE_APPS'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const app = name.replace(/-\d+$/, '');
  if (!wanted.includes('all') && !wanted.includes(name) && !wanted.includes(app)) return [];
  return ['--cpu-prof', `--cpu-prof-dir=${env['PROFILE_DIR'] || path.join('.data', 'profiles')}`];
}

/** Back-off before restarting a process that crashed `recent` times within the last minute. */
export function restartDelayMs(recent: number): number {
  return recent === 0 ? 0 : Math.min(250 * 2 ** (recent - 1), 4000);
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited (the benchmarks stop theirs with it too). */
export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
