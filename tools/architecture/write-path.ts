/**
 * `npx tsx tools/architecture/write-path.ts [--repo DIR] [--writes N] [--poll-only] [--out FILE]`:
 * the files an independent write crosses, measured from the running code (docs/architecture.md,
 * "The write path, counted").
 *
 * Runs the checkout at DIR (default: this one; it must have its node_modules) as `npm start` runs
 * it, from the TypeScript sources (`tsx`, so V8 reports .ts files): a private redis-server, the
 * devnet node, one API process and one worker process, with ARC callbacks to the API as the
 * launcher configures them (`--poll-only`: no callbacks, the confirmation poll proves). After two
 * warm-up writes have been proven, it opens a window in the API and the worker (V8 precise
 * coverage, reset by SIGUSR2: tools/architecture/coverage-preload.mjs) and in Redis (MONITOR: the
 * scripts the window runs), writes one independent record (POST /api/v1/records), polls its status
 * until it shows a Merkle proof, and closes the window; N times (default 3). Then N idle windows
 * of the same length with no write: what the processes run on their own (timers, polls).
 *
 * On the path: the .ts files of apps/ and libs/ with a function called in every write window, or
 * in more than half of them and in more write windows than idle ones (each window starts after a
 * random pause, so no timer keeps one phase to them; barrel index.ts files, which only re-export,
 * apart), per process and in all, and our .lua files whose source (alone or after its prelude) is
 * a script run by the same rule. Not counted: the devnet node (it stands
 * for ARC), node_modules, BullMQ's own scripts. The JSON lists every file with the number of write
 * and idle windows it ran in (idle > 0: timers and polls run it too, with or without a write).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { freePort } from '@proofline/shared-testing';

interface Args {
  repo: string;
  out: string | undefined;
  writes: number;
  pollOnly: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { repo: path.resolve(__dirname, '../..'), out: undefined, writes: 3, pollOnly: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    if (a === '--poll-only') {
      args.pollOnly = true;
      continue;
    }
    if (a === '--repo' && v) args.repo = path.resolve(v);
    else if (a === '--out' && v) args.out = path.resolve(v);
    else if (a === '--writes' && v && Number(v) >= 1) args.writes = Number(v);
    else throw new Error(`usage: write-path.ts [--repo DIR] [--writes N] [--poll-only] [--out FILE] (got ${a})`);
    i++;
  }
  return args;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`write-path: ${what} not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

interface V8Function {
  functionName: string;
  ranges: { count: number }[];
}
interface V8Script {
  url: string;
  functions: V8Function[];
}

/** Repository-relative .ts files (apps/, libs/) with a function called, each with those functions. */
function filesRun(coverageFile: string, repo: string): Map<string, string[]> {
  const scripts = JSON.parse(fs.readFileSync(coverageFile, 'utf8')) as V8Script[];
  const files = new Map<string, string[]>();
  for (const s of scripts) {
    const file = s.url.startsWith('file:') ? fileURLToPath(s.url) : s.url;
    const rel = path.relative(repo, file);
    if (!/^(apps|libs)\//.test(rel) || !rel.endsWith('.ts') || /node_modules|\/devnet\//.test(rel)) continue;
    const called = s.functions.filter((f) => (f.ranges[0]?.count ?? 0) > 0).map((f) => f.functionName || '(anonymous)');
    if (called.length > 0) files.set(rel, [...new Set([...(files.get(rel) ?? []), ...called])]);
  }
  return files;
}

function luaFiles(dir: string, repo: string, found: string[] = []): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.') || entry.name === 'dist') continue;
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) luaFiles(p, repo, found);
    else if (entry.name.endsWith('.lua')) found.push(path.relative(repo, p));
  }
  return found;
}

async function main(): Promise<void> {
  const { repo, out, writes, pollOnly } = parseArgs(process.argv.slice(2));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'write-path-'));
  const children: ChildProcess[] = [];
  const redisPort = await freePort();
  children.push(
    spawn('redis-server', ['--port', String(redisPort), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }),
  );
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const redis = new Redis(redisUrl);
  await until('redis', async () => ((await redis.ping()) === 'PONG' ? true : undefined), 5000);
  // The scripts a window runs: MONITOR's EVALSHA lines (sha and first key), traced to our .lua
  // files by the sha1 of each source as the code loads it (below: a file alone, or after a prelude).
  let windowScripts: Map<string, string> | undefined;
  const monitor = await redis.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (windowScripts && args[0]?.toLowerCase() === 'evalsha' && args[1]) windowScripts.set(args[1], args[3] ?? '');
  });

  const [apiPort, devnetPort] = [await freePort(), await freePort()];
  const devnetUrl = `http://127.0.0.1:${devnetPort}`;
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const key = `idty_${randomBytes(24)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .padEnd(32, 'x')
    .slice(0, 32)}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    NETWORK: 'devnet',
    REDIS_URL: redisUrl,
    REDIS_PREFIX: 'wp',
    DEVNET_PORT: String(devnetPort),
    DEVNET_REDIS_URL: redisUrl,
    PORT: String(apiPort),
    API_PROCESSES: '1',
    ARC_URL: devnetUrl,
    HEADERS_URL: devnetUrl,
    ...(pollOnly
      ? {}
      : { ARC_CALLBACK_URL: `${apiUrl}/arc/callback`, ARC_CALLBACK_TOKEN: randomBytes(24).toString('hex') }),
    BOOTSTRAP_API_KEY: key,
    BLOCK_INTERVAL_MS: '1000',
    LOG_LEVEL: 'warn',
  };
  const preload = path.join(__dirname, 'coverage-preload.mjs');
  const start = (app: string, cov: boolean) => {
    const child = spawn(
      process.execPath,
      [...(cov ? ['--import', preload] : []), '--import', 'tsx', path.join(repo, 'apps', app, 'src', 'main.ts')],
      {
        cwd: repo,
        env: { ...env, ...(cov ? { WRITE_PATH_COVERAGE: path.join(work, app) } : {}) },
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
    children.push(child);
    return child;
  };
  try {
    start('devnet', false);
    await until('devnet', async () => ((await fetch(`${devnetUrl}/liveness`)).ok ? true : undefined), 60_000);
    const api = start('api', true);
    const worker = start('worker', true);
    await until('api', async () => ((await fetch(`${apiUrl}/readiness`)).ok ? true : undefined), 90_000);

    const write = async (body: string) =>
      until(
        'a write (the pool is funded by the worker once coinbases mature)',
        async () => {
          const res = await fetch(`${apiUrl}/api/v1/records`, {
            method: 'POST',
            headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' },
            body,
          });
          return res.status === 200 ? ((await res.json()) as { txId: string }).txId : undefined;
        },
        120_000,
      );
    const proven = (txId: string) =>
      until(
        `the proof of ${txId}`,
        async () => {
          const res = await fetch(`${apiUrl}/api/v1/records/${txId}/status`, { headers: { 'x-api-key': key } });
          const status = (await res.json()) as { confirmation?: { merkleProof?: unknown } | null };
          return status.confirmation?.merkleProof ? true : undefined;
        },
        60_000,
      );
    // Warm-up: two writes proven, so the window holds the steady state, not first-use set-up.
    for (const body of ['warm-up 1', 'warm-up 2']) await proven(await write(body));

    let signals = 0;
    const window = async (run: () => Promise<unknown>) => {
      // A random pause first, so that no timer keeps the same phase to every window.
      await sleep(Math.random() * 2500);
      for (const p of [api, worker]) p.kill('SIGUSR2');
      await sleep(200);
      const scripts = new Map<string, string>();
      windowScripts = scripts;
      const started = Date.now();
      await run();
      const ms = Date.now() - started;
      windowScripts = undefined;
      for (const p of [api, worker]) p.kill('SIGUSR2');
      await sleep(500);
      signals += 2;
      const taken = signals - 1;
      return {
        ms,
        scripts,
        api: filesRun(path.join(work, `api.${taken}.json`), repo),
        worker: filesRun(path.join(work, `worker.${taken}.json`), repo),
      };
    };
    type Window = Awaited<ReturnType<typeof window>>;
    const written: Window[] = [];
    for (let i = 0; i < writes; i++) written.push(await window(async () => proven(await write(`measured ${i}`))));
    const idle: Window[] = [];
    for (const w of written) idle.push(await window(() => sleep(w.ms)));

    const ours = luaFiles(repo, repo).filter((f) => !f.includes('/devnet/'));
    const shaOf = (source: string) => createHash('sha1').update(source).digest('hex');
    const read = (f: string) => fs.readFileSync(path.join(repo, f), 'utf8');
    // Preludes: a .lua file without a key count in its name (put in front of its folder's
    // scripts), and any `-- BEGIN name` … `-- END name` section (a contract another lib's scripts start with).
    const preludes = ours.filter((f) => !/-(\d+|n)\.lua$/.test(f)).map(read);
    for (const f of ours)
      for (const m of read(f).matchAll(/-- BEGIN (\S+)\n([\s\S]*?)-- END \1/g)) preludes.push(m[2] as string);
    const luaBySha = new Map<string, string[]>();
    const add = (sha: string, f: string) => luaBySha.set(sha, [...(luaBySha.get(sha) ?? []), f]);
    for (const f of ours) {
      const source = read(f);
      // A `#!lua` first line stays first: the prelude goes after it (shared-redis loadLuaCommands).
      const shebang = /^#!lua[^\n]*\n/.exec(source)?.[0] ?? '';
      add(shaOf(source), f);
      for (const p of preludes) add(shaOf(`${shebang}${p}\n${source.slice(shebang.length)}`), f);
    }
    /** name -> [write windows, idle windows] it ran in. */
    const tally = (names: (w: Window) => Iterable<string>) => {
      const t = new Map<string, [number, number]>();
      for (const [i, set] of [written, idle].entries())
        for (const w of set)
          for (const n of new Set(names(w))) {
            const c = t.get(n) ?? [0, 0];
            c[i] = (c[i] ?? 0) + 1;
            t.set(n, c);
          }
      return Object.fromEntries([...t.entries()].sort(([a], [b]) => a.localeCompare(b)));
    };
    const isBarrel = (f: string) => f.endsWith('/index.ts');
    /** `file#function` for every function a process ran in a window. */
    const calls = (files: Map<string, string[]>) => [...files].flatMap(([f, fns]) => fns.map((fn) => `${f}#${fn}`));
    const report = {
      repo,
      callbacks: !pollOnly,
      windowsMs: written.map((w) => w.ms),
      api: tally((w) => w.api.keys()),
      worker: tally((w) => w.worker.keys()),
      functions: { api: tally((w) => calls(w.api)), worker: tally((w) => calls(w.worker)) },
      lua: tally((w) => [...w.scripts.keys()].flatMap((sha) => luaBySha.get(sha) ?? [])),
      otherScripts: tally((w) =>
        [...w.scripts.entries()].filter(([sha]) => !luaBySha.has(sha)).map(([, key]) => key.replace(/^[^:]+:/, '')),
      ),
    };
    // On the path: a function of the file ran in every write window, or in more than half of them
    // and in more write windows than idle ones (a timer runs as often without a write). Files
    // whose counted functions also ran in most idle windows are listed as run by timers too.
    const byTheWrite = ([w, i]: [number, number]) => w === writes || (w * 2 > writes && w > i);
    const ranIdle = ([, i]: [number, number]) => i * 2 > writes;
    const onPath = (functions: Record<string, [number, number]>) => {
      const byFile = new Map<string, [number, number][]>();
      for (const [call, c] of Object.entries(functions)) {
        const f = call.slice(0, call.indexOf('#'));
        if (byTheWrite(c) && !isBarrel(f)) byFile.set(f, [...(byFile.get(f) ?? []), c]);
      }
      const files = [...byFile.keys()].sort();
      return { files, timers: files.filter((f) => (byFile.get(f) ?? []).every(ranIdle)) };
    };
    const apiPath = onPath(report.functions.api);
    const workerPath = onPath(report.functions.worker);
    const crossed = {
      api: apiPath.files,
      worker: workerPath.files,
      timers: [...new Set([...apiPath.timers, ...workerPath.timers])].sort(),
      lua: Object.entries(report.lua)
        .filter(([, c]) => byTheWrite(c))
        .map(([f]) => f),
    };
    const all = new Set([...crossed.api, ...crossed.worker]);
    if (out)
      fs.writeFileSync(out, JSON.stringify({ ...report, onPath: { ...crossed, all: [...all].sort() } }, null, 2));
    process.stdout.write(
      `${repo} (${pollOnly ? 'poll only' : 'callbacks'}): write windows ${written.map((w) => w.ms).join(', ')} ms; ` +
        `.ts files on the path: api ${crossed.api.length}, worker ${crossed.worker.length}, in all ${all.size} ` +
        `(${crossed.timers.length} of them also run by timers); ` +
        `our Lua scripts ${crossed.lua.length}${out ? `; details in ${out}` : ''}\n`,
    );
  } finally {
    monitor.disconnect();
    redis.disconnect();
    const [redisServer, ...apps] = children;
    for (const c of apps) c.kill('SIGTERM');
    await sleep(1500);
    redisServer?.kill('SIGTERM');
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
