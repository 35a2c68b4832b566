// Test helper (not a spec): the compiled production build in a private out dir and the compiled
// launcher started from it, exactly as `npm start` runs it.
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, freePort, testRedisUrl } from '@proofline/shared-testing';

const ROOT = path.resolve(__dirname, '../../../..');

/** Environment of a production process, without anything of jest's (no loader in NODE_OPTIONS). */
export function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...extra };
}

export interface Launched {
  child: ChildProcess;
  env: NodeJS.ProcessEnv;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * A build of the apps into `.jest-cache/<name>/dist` (inside the repository, so the bundles resolve
 * node_modules like dist/ does; `.data` beside it) and the launcher run from it.
 */
export function compiledLauncher(name: string) {
  const BUILD = path.join(ROOT, '.jest-cache', name);
  const DIST = path.join(BUILD, 'dist');
  const BUILD_SCRIPT = path.join(ROOT, 'tools', 'build', 'build.mjs');

  /** Builds the bundles (a spec's beforeAll). */
  const build = (): void => {
    execFileSync(process.execPath, [BUILD_SCRIPT, '--out', DIST], { cwd: ROOT, stdio: 'pipe' });
  };

  /** A production start on free private ports with a fresh .data, as `npm start` runs it (`extra` adds or overrides). */
  const productionStart = async (
    extra: Record<string, string>,
  ): Promise<{
    env: NodeJS.ProcessEnv;
    redisPort: number;
    apiPort: number;
    graphqlPort: number;
    devnetPort: number;
  }> => {
    const [redisPort, apiPort, graphqlPort, devnetPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    fs.rmSync(path.join(BUILD, '.data'), { recursive: true, force: true });
    const env = baseEnv({
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: randomBytes(32).toString('hex'),
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      PORT: String(apiPort),
      GRAPHQL_PORT: String(graphqlPort),
      DEVNET_PORT: String(devnetPort),
      HOST: '127.0.0.1',
      WORKERS: '1',
      ...extra,
    });
    return { env, redisPort, apiPort, graphqlPort, devnetPort };
  };

  const launch = (env: NodeJS.ProcessEnv): Launched => {
    // Its own process group, like a terminal's foreground job: Ctrl-C is SIGINT to the group.
    const child = spawn(process.execPath, [path.join(DIST, 'apps', 'launcher', 'main.js')], {
      cwd: BUILD,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, env, output: () => out, exited };
  };

  return { BUILD, DIST, BUILD_SCRIPT, build, productionStart, launch };
}

/**
 * What `productionStart` needs to run `npm start` on the run's test Redis: REDIS_URL alone names
 * it (one node of a cluster on the cluster topologies, so every process asks whether it is a
 * cluster; the devnet node too, DEVNET_REDIS_URL), keys under `prefix`, `key` bootstrapped as an
 * admin key, a block every 300 ms.
 */
export function onTestRedis(prefix: string, key: string): Record<string, string> {
  return {
    BOOTSTRAP_API_KEY: key,
    REDIS_URL: testRedisUrl(),
    DEVNET_REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: prefix,
    BLOCK_INTERVAL_MS: '300',
    SHUTDOWN_GRACE_MS: '5000',
  };
}

/**
 * A record written through the running service and its proof: the write is retried while it
 * answers 503 FUNDING_EXHAUSTED (until the worker's first wallet upkeep has split a coinbase into
 * the pool); then the record's status is polled until it carries a Merkle proof (the devnet's
 * callback proves it; polling ARC would only ask after ARC_CALLBACK_GRACE_MS, 30 s).
 */
export async function writeAndProve(
  api: string,
  key: string,
  content: string,
  timeoutMs = 20_000,
): Promise<{
  write: { status: number; body: { txId?: string; errorCode?: string } };
  proof: unknown;
}> {
  const write = await eventually(
    async () => {
      const res = await fetch(`${api}/api/v1/records?encode=SHA256`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' },
        body: content,
      });
      const body = (await res.json()) as { txId?: string; errorCode?: string };
      return body.errorCode === 'FUNDING_EXHAUSTED' ? undefined : { status: res.status, body };
    },
    timeoutMs,
    200,
  );
  if (write.status !== 200) return { write, proof: undefined };
  const confirmed = await eventually(
    async () => {
      const res = await fetch(`${api}/api/v1/records/${write.body.txId ?? ''}/status`, {
        headers: { 'x-api-key': key },
      });
      const body = (await res.json()) as { confirmation: { merkleProof?: unknown } | null };
      return body.confirmation?.merkleProof ? body : undefined;
    },
    timeoutMs,
    100,
  );
  return { write, proof: confirmed.confirmation?.merkleProof };
}
