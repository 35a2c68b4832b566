/**
 * The compiled production build, end to end: `tools/build/build.mjs` into a private out dir
 * (inside the repository, so the bundles resolve node_modules like dist/ does), then the
 * compiled launcher with its own redis-server on private ports, exactly as `npm start` runs it.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { eventually, freePort, listeners, startLoad } from '@proofline/shared-testing';
import type { Answer } from '@proofline/shared-testing';
import { baseEnv, compiledLauncher, writeAndProve } from './testing/compiled-launcher';
import type { Launched } from './testing/compiled-launcher';

const ROOT = path.resolve(__dirname, '../../..');
const { BUILD, DIST, BUILD_SCRIPT, build, productionStart, launch } = compiledLauncher('launcher-spec');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

jest.setTimeout(90_000);

/** Direct children of `pid` with their argv, from /proc. */
function childrenOf(pid: number): { pid: number; argv: string[]; env: string }[] {
  const out: { pid: number; argv: string[]; env: string }[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== pid) continue;
      const argv = fs
        .readFileSync(`/proc/${entry}/cmdline`, 'utf8')
        .split('\0')
        .filter((a) => a.length > 0);
      const env = fs.readFileSync(`/proc/${entry}/environ`, 'utf8');
      out.push({ pid: Number(entry), argv, env });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Alive and not a zombie (an orphan's exit is reaped by init whenever init gets to it). */
function running(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Start time of a process in clock ticks since boot (/proc/<pid>/stat field 22): orders siblings by start. */
function startTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

beforeAll(build);

/**
 * fetch, sent again once when a pooled keep-alive connection met the server's idle close as it was
 * reused (undici: "other side closed"), which a CPU-starved machine makes likely. Any other
 * failure, and a second one, fails the spec.
 */
async function fetchOnce(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause;
    if (cause?.code !== 'UND_ERR_SOCKET') throw e;
    return fetch(url, init);
  }
}

describe('npm run build', () => {
  it('compiles every app to a bundle and copies the files the sources read from disk', () => {
    const apps = fs
      .readdirSync(path.join(ROOT, 'apps'))
      .filter((a) => fs.existsSync(path.join(ROOT, 'apps', a, 'src', 'main.ts')));
    expect(apps).toEqual(expect.arrayContaining(['api', 'cli', 'graphql', 'launcher', 'worker']));
    for (const app of apps) expect(fs.statSync(path.join(DIST, 'apps', app, 'main.js')).size).toBeGreaterThan(1000);
    for (const dir of [
      'libs/identity/data-access/src/lua',
      'libs/records/data-access/src/lua',
      'libs/devnet/node/src/lua',
      'libs/chain/arc/src/lua',
      'libs/chain/wallet/src/lua',
    ]) {
      expect(fs.readdirSync(path.join(DIST, dir)).sort()).toEqual(
        fs
          .readdirSync(path.join(ROOT, dir))
          .filter((f) => f.endsWith('.lua'))
          .sort(),
      );
    }
    expect(JSON.parse(fs.readFileSync(path.join(DIST, 'package.json'), 'utf8'))).toMatchObject({ version: VERSION });
    // Workspace libs are bundled in; no bundle refers to a source file or a TypeScript loader.
    for (const app of apps) {
      const js = fs.readFileSync(path.join(DIST, 'apps', app, 'main.js'), 'utf8');
      expect(js).not.toMatch(/require\("@proofline\//);
      expect(js).not.toMatch(/require\("tsx/);
    }
  });

  it('loads nothing at run time but Node built-ins and production dependencies (the image has no dev dependencies)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const builtins = new Set(builtinModules);
    for (const app of fs.readdirSync(path.join(DIST, 'apps'))) {
      const js = fs.readFileSync(path.join(DIST, 'apps', app, 'main.js'), 'utf8');
      const packages = [...js.matchAll(/require\("([^".][^"]*)"\)/g)]
        .map((m) => m[1] ?? '')
        .filter((name) => !name.startsWith('node:') && !builtins.has(name))
        .map((name) => (name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : (name.split('/')[0] ?? '')));
      expect(packages.length).toBeGreaterThan(0);
      expect(packages.filter((name) => pkg.dependencies[name] === undefined)).toEqual([]);
    }
  });

  it('--if-stale builds only when the stamp is older than a source', () => {
    const stamp = path.join(DIST, '.build-stamp');
    const before = fs.readFileSync(stamp, 'utf8');
    execFileSync(process.execPath, [BUILD_SCRIPT, '--if-stale', '--out', DIST], { cwd: ROOT, stdio: 'pipe' });
    expect(fs.readFileSync(stamp, 'utf8')).toBe(before);
    fs.utimesSync(stamp, new Date(0), new Date(0));
    const out = execFileSync(process.execPath, [BUILD_SCRIPT, '--if-stale', '--out', DIST], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(out).toContain('proofline build:');
    expect(fs.statSync(stamp).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('npm start (compiled launcher)', () => {
  it('refuses production without AUTH_JWT_SECRET or AUTH_JWKS_URL in one line, exit 78', async () => {
    const run = launch(baseEnv({ NODE_ENV: 'production', REDIS_URL: `redis://127.0.0.1:${await freePort()}` }));
    const { code } = await run.exited;
    expect(code).toBe(78);
    expect(run.output().trim()).toBe(
      'proofline start: configuration error: AUTH_JWT_SECRET: required when NODE_ENV=production (32+ characters), or set AUTH_JWKS_URL',
    );
  });

  it('runs node on the compiled apps with its own redis-server, restarts each SIGKILLed API process alone under load (none refused), and stops the apps before Redis without connection errors', async () => {
    const key = `idty_${randomBytes(16).toString('hex')}`;
    const { env, redisPort, apiPort, graphqlPort, devnetPort } = await productionStart({
      BLOCK_INTERVAL_MS: '200',
      BOOTSTRAP_API_KEY: key,
      SHUTDOWN_GRACE_MS: '5000',
    });
    const run = launch(env);
    const pid = run.child.pid ?? 0;
    const api = `http://127.0.0.1:${apiPort}`;
    try {
      await eventually(async () => run.output().includes('"msg":"ready:'), 60_000, 100);
      // The launcher announces the first readiness 200; the other API process may still be starting
      // (it answers readiness 503 until its own Redis connection is up), so wait on the answer.
      const readiness = await eventually(
        async () => {
          const res = await fetch(`${api}/readiness`);
          return res.status === 200 ? ((await res.json()) as { status: string; appVersion: string }) : undefined;
        },
        30_000,
        100,
      );
      expect(readiness).toMatchObject({ status: 'ready', appVersion: VERSION });

      // Every process the launcher started is `node <bundle>` (or the redis-server): no loader.
      const children = childrenOf(pid);
      const nodes = children.filter((c) => c.argv[0] === process.execPath);
      expect(nodes.map((c) => path.relative(DIST, c.argv[1] ?? '')).sort()).toEqual([
        'apps/api/main.js',
        'apps/api/main.js',
        'apps/devnet/main.js',
        'apps/graphql/main.js',
        'apps/worker/main.js',
      ]);
      // No ARC_URL in the environment: the devnet node runs, and the apps are pointed at it.
      const devnetUrl = `http://127.0.0.1:${devnetPort}`;
      for (const c of nodes.filter((n) => !n.argv[1]?.endsWith('apps/devnet/main.js'))) {
        expect(c.env.split('\0')).toEqual(
          expect.arrayContaining([
            `ARC_URL=${devnetUrl}`,
            `HEADERS_URL=${devnetUrl}`,
            `ARC_CALLBACK_URL=${api}/arc/callback`,
          ]),
        );
      }
      const policy = (await (await fetchOnce(`${devnetUrl}/v1/policy`)).json()) as { policy: { miningFee: unknown } };
      expect(policy.policy.miningFee).toEqual({ satoshis: 1, bytes: 1000 });
      for (const c of nodes) expect(c.argv).toHaveLength(2);
      // Two redis-servers: the service's (REDIS_URL did not answer) and the devnet node's own.
      const others = children.filter((c) => c.argv[0] !== process.execPath);
      expect(others.map((c) => c.argv[0]?.replace(/:\d+$/, ''))).toEqual([
        'redis-server 127.0.0.1',
        'redis-server 127.0.0.1',
      ]);
      expect(others.map((c) => c.argv[0])).toContain(`redis-server 127.0.0.1:${redisPort}`);
      const devnetNode = nodes.find((n) => n.argv[1]?.endsWith('apps/devnet/main.js'));
      const devnetRedisUrl = devnetNode?.env
        .split('\0')
        .find((e) => e.startsWith('DEVNET_REDIS_URL='))
        ?.slice('DEVNET_REDIS_URL='.length);
      expect(devnetRedisUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
      expect(devnetRedisUrl).not.toBe(`redis://127.0.0.1:${redisPort}`);
      for (const c of [...children, { argv: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'), env: '' }]) {
        expect(c.argv.join(' ')).not.toMatch(/tsx|--import|--require|--loader|ts-node/);
        expect(c.env).not.toMatch(/NODE_OPTIONS=[^\0]*(tsx|--import|--require|--loader)/);
      }

      // Lua scripts (records, identity, devnet block producer) load from the compiled output:
      // a write is accepted, published and proven.
      const { write, proof } = await writeAndProve(api, key, 'compiled build');
      expect(write.status).toBe(200);
      const txId = write.body.txId ?? '';
      expect(proof).toBeTruthy();
      // The compiled CLI runs too (`node dist/apps/cli/main.js`): its key authorizes a read.
      const cliKey = execFileSync(process.execPath, [path.join(DIST, 'apps', 'cli', 'main.js'), 'keys', 'bootstrap'], {
        cwd: BUILD,
        env: run.env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }).trim();
      expect(cliKey).toMatch(/^idty_[A-Za-z0-9]{32}$/);
      expect(
        (await fetchOnce(`${api}/api/v1/records/${txId}/status`, { headers: { 'x-api-key': cliKey } })).status,
      ).toBe(200);
      // Swagger UI assets come from swagger-ui-dist in node_modules.
      const css = await fetchOnce(`${api}/api/v1/docs/swagger-ui.css`);
      expect(css.status).toBe(200);
      expect((await css.text()).length).toBeGreaterThan(1000);
      const graphql = await eventually(
        () =>
          fetch(`http://127.0.0.1:${graphqlPort}/graphql`, {
            method: 'POST',
            headers: { 'x-api-key': key, 'content-type': 'application/json' },
            body: JSON.stringify({ query: '{ __typename }' }),
          }),
        20_000,
        100,
      );
      expect(await graphql.json()).toEqual({ data: { __typename: 'Query' } });

      // API_PROCESSES=2 (the default): two independent processes share the port (reusePort), each
      // supervised by the launcher. SIGKILL each in turn under load, the one started first first:
      // no connection is refused, and a request fails only if it was in flight at a kill.
      const apiPids = () =>
        childrenOf(pid)
          .filter((c) => c.argv[1]?.endsWith('apps/api/main.js'))
          .map((c) => c.pid);
      const original = apiPids().sort((a, b) => startTicks(a) - startTicks(b) || a - b);
      expect(original).toHaveLength(2);
      await eventually(async () => listeners(apiPort) === 2, 20_000, 20);
      const concurrency = 8;
      const load = startLoad(
        api,
        [`/api/v1/records/${txId}/status`, '/api/v1/auth/identity-api-keys/usage', '/api/v1/openapi.json'].map(
          (p) => () => ({ method: 'GET', path: p, headers: { 'x-api-key': key } }),
        ),
        concurrency,
      );
      const kills: { killedAt: number; goneAt: number }[] = [];
      try {
        await eventually(async () => load.answers().filter((a) => a.status === 200).length > 20, 20_000, 20);
        for (const victim of original) {
          const before = apiPids();
          process.kill(victim, 'SIGKILL');
          const killedAt = Date.now();
          // The kernel frees a killed process's memory before its files: its listening socket
          // takes connections into its own queue until then, and resets them when it closes. Those
          // were in flight in that process; `goneAt` is when its socket closed. (Its pid is no
          // clock for that: the main thread is a zombie while the others still tear down.)
          const goneAt = await eventually(async () => listeners(apiPort) < 2 && Date.now(), 5000, 1);
          kills.push({ killedAt, goneAt });
          // The launcher restarts this one alone: its sibling keeps its pid.
          const after = await eventually(
            async () => {
              const now = apiPids();
              return now.length === 2 && !now.includes(victim) ? now : undefined;
            },
            10_000,
            20,
          );
          expect(after.filter((p) => p !== victim && before.includes(p))).toHaveLength(1);
          // Load on until the replacement listens too (it composes first, then shares the port).
          await eventually(async () => listeners(apiPort) === 2, 20_000, 20);
          await eventually(
            async () => load.answers().filter((a) => a.startedAt > killedAt + 500 && a.status === 200).length > 50,
            30_000,
            20,
          );
        }
      } finally {
        await load.stop();
      }
      const answers = load.answers();
      const failed = answers.filter((a) => a.status === 0);
      expect(answers.filter((a) => a.error === 'ECONNREFUSED')).toEqual([]);
      // Each failure was in flight in a killed process: sent before it was gone, failed after the kill.
      const inFlight = (a: Answer, k: { killedAt: number; goneAt: number }) =>
        a.startedAt <= k.goneAt && a.startedAt + a.ms >= k.killedAt;
      expect(failed.filter((a) => !kills.some((k) => inFlight(a, k)))).toEqual([]);
      // At most one per load loop and kill.
      for (const k of kills) expect(failed.filter((a) => inFlight(a, k)).length).toBeLessThanOrEqual(concurrency);
      expect(answers.filter((a) => a.status >= 500)).toEqual([]);
      expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(100);
      expect(run.output()).toMatch(/"msg":"api-1 exited \(SIGKILL\); restarting in 0 ms"/);
      expect(run.output()).toMatch(/"msg":"api-2 exited \(SIGKILL\); restarting in 0 ms"/);
      await eventually(async () => (await fetch(`${api}/readiness`)).status === 200, 20_000, 50);
      process.stdout.write(
        `api processes killed in turn: ${answers.length} answers, ${failed.length} in flight failed (${[...new Set(failed.map((a) => a.error))].join(', ') || 'none'}), 0 refused; each process gone ${kills.map((k) => k.goneAt - k.killedAt).join(', ')} ms after its SIGKILL\n`,
      );
    } finally {
      const redisPids = childrenOf(pid)
        .filter((c) => c.argv[0]?.startsWith('redis-server'))
        .map((c) => c.pid);
      const devnetChild = childrenOf(pid).find((c) => c.argv[1]?.endsWith('apps/devnet/main.js'))?.pid;
      process.kill(-pid, 'SIGINT'); // Ctrl-C: the launcher and every app of its group

      const { code } = await run.exited;
      expect(code).toBe(0);
      const output = run.output();
      expect(output).not.toMatch(/ECONNREFUSED|connection error|Connection is closed/i);
      // apps first, then Redis; the redis-server it started is gone, its AOF on disk.
      const stoppedApps = output.indexOf('"msg":"stopping (SIGINT)');
      expect(stoppedApps).toBeGreaterThan(0);
      expect(output.indexOf('"msg":"stopped"', stoppedApps)).toBeGreaterThan(stoppedApps);
      expect(redisPids).toHaveLength(2);
      for (const redisPid of redisPids) expect(alive(redisPid)).toBe(false);
      // The devnet node (its own process group: the terminal's SIGINT missed it) was stopped by the launcher.
      expect(devnetChild).toBeDefined();
      expect(alive(devnetChild ?? 0)).toBe(false);
      expect(output).toContain('"msg":"devnet node stopping"');
      expect(fs.readdirSync(path.join(BUILD, '.data', 'redis')).some((f) => f.startsWith('appendonly'))).toBe(true);
      expect(fs.readdirSync(path.join(BUILD, '.data', 'devnet-redis')).some((f) => f.startsWith('appendonly'))).toBe(
        true,
      );
      // Stopped by the launcher's SIGTERM after the apps, not by the terminal's SIGINT under them.
      const redisLog = fs.readFileSync(path.join(BUILD, '.data', 'redis', 'redis.log'), 'utf8');
      expect(redisLog).toContain('Received SIGTERM');
      expect(redisLog).not.toContain('Received SIGINT');
    }
  });

  it('a SIGKILLed launcher: every app and the devnet node stop by themselves; the next start stops the redis-server it left and starts clean', async () => {
    const { env, redisPort, apiPort, devnetPort } = await productionStart({
      API_PROCESSES: '1',
      BLOCK_INTERVAL_MS: '500',
      SHUTDOWN_GRACE_MS: '3000',
    });
    const ready = async (run: Launched) => {
      await eventually(async () => run.output().includes('"msg":"ready:'), 60_000, 100);
      await eventually(async () => (await fetch(`http://127.0.0.1:${apiPort}/readiness`)).status === 200, 30_000, 100);
    };
    const first = launch(env);
    const firstPid = first.child.pid ?? 0;
    let second: Launched | undefined;
    const leftovers: number[] = [];
    try {
      await ready(first);
      const children = childrenOf(firstPid);
      const nodes = children.filter((c) => c.argv[0] === process.execPath).map((c) => c.pid);
      const redisServers = children
        .filter((c) => c.argv[0]?.startsWith('redis-server'))
        .map((c) => ({ pid: c.pid, port: Number(c.argv[0]?.split(':').pop()) }));
      expect(nodes).toHaveLength(4);
      expect(redisServers).toHaveLength(2);
      leftovers.push(...redisServers.map((r) => r.pid));

      process.kill(firstPid, 'SIGKILL'); // the launcher alone: no exit handler runs
      await first.exited;
      // Each app saw its IPC channel close and ran its own graceful stop; the devnet's port is free.
      await eventually(async () => nodes.every((p) => !running(p)), 20_000, 100);
      await expect(fetch(`http://127.0.0.1:${devnetPort}/v1/policy`)).rejects.toThrow();
      // The redis-servers (their own process groups) are still there: nobody stopped them.
      for (const r of redisServers) expect(running(r.pid)).toBe(true);
      const devnetRedis = redisServers.find((r) => r.port !== redisPort);
      expect(devnetRedis).toBeDefined();

      // The next start finds the service Redis answering and uses it; it stops the devnet's
      // orphaned redis-server (same data directory) before starting its own.
      second = launch(env);
      await ready(second);
      expect(running(devnetRedis?.pid ?? 0)).toBe(false);
      expect(fs.readFileSync(path.join(BUILD, '.data', 'devnet-redis', 'redis.log'), 'utf8')).toContain(
        'Received SIGTERM',
      );
      const write = await fetchOnce(`http://127.0.0.1:${apiPort}/api/v1/openapi.json`);
      expect(write.status).toBe(200);
    } finally {
      if (second?.child.pid) {
        process.kill(-second.child.pid, 'SIGINT');
        await second.exited;
      }
      for (const p of leftovers) if (running(p)) process.kill(p, 'SIGTERM');
    }
  });
});
