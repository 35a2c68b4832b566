/**
 * Real processes for the outage spec and `npm run probe`: a redis-server this code starts, stops,
 * freezes and kills (on a free port, its own data dir), the compiled apps (`node
 * dist/apps/<app>/main.js`, as users run them), and a load generator that opens a new connection
 * per request so a refused connection is counted as one.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort } from '@proofline/shared-testing';
import type { Answer } from '@proofline/shared-testing';

export { request, startLoad } from '@proofline/shared-testing';
export type { Answer, Load, RequestSpec } from '@proofline/shared-testing';

export const ROOT = path.resolve(__dirname, '../..');

/** Builds the compiled apps into `outDir` (inside the repository, so bundles resolve node_modules). */
export function buildInto(outDir: string): string {
  execFileSync(process.execPath, [path.join(ROOT, 'tools', 'build', 'build.mjs'), '--out', outDir], {
    cwd: ROOT,
    stdio: 'pipe',
  });
  return outDir;
}

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  pid(): number | undefined;
  /** Starts (again) on the same port and data dir; resolves once it answers PING. Running already: nothing. */
  start(): Promise<void>;
  /** SIGKILL (no AOF flush beyond everysec). */
  kill(): Promise<void>;
  /** SIGTERM (flushes the AOF). */
  stop(): Promise<void>;
  freeze(): void;
  thaw(): void;
}

/**
 * How a redis-server syncs its AOF: `everysec` as every Redis Proofline starts, or `always` when
 * a spec asserts that no acknowledged write is lost to a SIGKILL (under `everysec` Redis may
 * postpone its AOF write for up to 2 s while a slow fsync runs, and still answer: docs/operations.md).
 */
export type AofSync = 'everysec' | 'always';

/** A redis-server on a free port with AOF (`fsync`, default everysec) under `dir` (created). Not started yet. */
export async function redisServer(
  dir: string,
  options: { aof?: boolean; cluster?: boolean; fsync?: AofSync } = {},
): Promise<RedisServer> {
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  let child: ChildProcess | undefined;
  const exited = (c: ChildProcess) =>
    new Promise<void>((resolve) =>
      c.exitCode !== null || c.signalCode !== null ? resolve() : c.once('exit', () => resolve()),
    );
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    pid: () => child?.pid,
    async start() {
      if (child && child.exitCode === null && child.signalCode === null) return;
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir];
      args.push('--appendonly', options.aof === false ? 'no' : 'yes', '--appendfsync', options.fsync ?? 'everysec');
      // A cluster node keeps its view of the cluster (slots, peers) in nodes.conf under `dir`, so
      // a restart rejoins; it announces 127.0.0.1 (a lone node knows no address of its own).
      if (options.cluster) args.push('--cluster-enabled', 'yes', '--cluster-announce-ip', '127.0.0.1');
      child = spawn('redis-server', args, { stdio: 'ignore' });
      await until(async () => (await redisPing(port)) === 'PONG', 15_000);
    },
    async kill() {
      if (!child) return;
      const c = child;
      c.kill('SIGCONT');
      c.kill('SIGKILL');
      await exited(c);
    },
    async stop() {
      if (!child) return;
      const c = child;
      c.kill('SIGCONT');
      c.kill('SIGTERM');
      await exited(c);
    },
    freeze: () => void child?.kill('SIGSTOP'),
    thaw: () => void child?.kill('SIGCONT'),
  };
  return server;
}

/** The Redis topologies the test suite runs on (`PROOFLINE_TEST_REDIS`). */
export type RedisTopology = 'standalone' | 'cluster1' | 'cluster3';

/** The topology of this test run (set by jest's global setup), standalone outside jest. */
export function testTopology(): RedisTopology {
  const t = process.env['PROOFLINE_TEST_REDIS_TOPOLOGY'];
  return t === 'cluster1' || t === 'cluster3' ? t : 'standalone';
}

/**
 * A private Redis of `topology` that a spec kills, freezes and restarts whole: one server, or
 * every node of a one- or three-master cluster (AOF everysec each, a directory each under `dir`).
 * `env` is what a process needs to reach it (`REDIS_URL` names the first node; on a cluster also
 * `REDIS_CLUSTER_NODES`). The first `start` creates the cluster; later ones restart its nodes,
 * which rejoin from their nodes.conf, and resolve once the cluster state is ok again.
 */
export interface RedisDeploymentUnderTest extends RedisServer {
  readonly topology: RedisTopology;
  readonly env: Readonly<Record<string, string>>;
  /**
   * Starts the server processes only: before the first `start`, a cluster's nodes then answer but
   * form no cluster yet (no slots; what a client meets while a cluster is being created).
   */
  startNodes(): Promise<void>;
}

export async function redisDeployment(
  dir: string,
  topology: RedisTopology,
  options: { fsync?: AofSync } = {},
): Promise<RedisDeploymentUnderTest> {
  if (topology === 'standalone') {
    const server = await redisServer(dir, options);
    return { ...server, topology, env: { REDIS_URL: server.url }, startNodes: () => server.start() };
  }
  const count = topology === 'cluster3' ? 3 : 1;
  const nodes: RedisServer[] = [];
  for (let i = 0; i < count; i++)
    nodes.push(await redisServer(path.join(dir, `node${i}`), { ...options, cluster: true }));
  const first = nodes[0];
  if (!first) throw new Error('no node');
  let created = false;
  const each = async (f: (n: RedisServer) => Promise<void> | void) => {
    await Promise.all(nodes.map((n) => f(n)));
  };
  const startNodes = () => each((n) => n.start());
  return {
    topology,
    port: first.port,
    url: first.url,
    dir,
    env: { REDIS_URL: first.url, REDIS_CLUSTER_NODES: nodes.map((n) => `127.0.0.1:${n.port}`).join(',') },
    pid: () => first.pid(),
    startNodes,
    async start() {
      await startNodes();
      if (!created) {
        if (count === 1) await redisCommand(first.port, 'CLUSTER ADDSLOTSRANGE 0 16383');
        else
          execFileSync(
            'redis-cli',
            [
              '--cluster',
              'create',
              ...nodes.map((n) => `127.0.0.1:${n.port}`),
              '--cluster-replicas',
              '0',
              '--cluster-yes',
            ],
            { stdio: 'ignore' },
          );
        created = true;
      }
      await until(async () => {
        for (const n of nodes)
          if (!(await redisCommand(n.port, 'CLUSTER INFO')).includes('cluster_state:ok')) return false;
        return true;
      }, 30_000);
    },
    kill: () => each((n) => n.kill()),
    stop: () => each((n) => n.stop()),
    freeze: () => void each((n) => n.freeze()),
    thaw: () => void each((n) => n.thaw()),
  };
}

/** One inline command over a raw socket: the whole first reply ('' when nothing answers). */
export function redisCommand(port: number, command: string, timeoutMs = 1000): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    const done = () => {
      socket.destroy();
      resolve(reply);
    };
    socket.setTimeout(timeoutMs, done);
    socket.once('error', done);
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (d) => {
      reply += d.toString();
      // A bulk reply ($<len>) is complete once its length arrived; a status line at its end.
      const bulk = /^\$(\d+)\r\n/.exec(reply);
      if (bulk ? reply.length >= bulk[0].length + Number(bulk[1]) + 2 : reply.endsWith('\r\n')) done();
    });
  });
}

/** PING over a raw socket (no client library, no retries): 'PONG' or the failure. */
export function redisPing(port: number, timeoutMs = 500): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const done = (v: string) => {
      socket.destroy();
      resolve(v);
    };
    socket.setTimeout(timeoutMs, () => done('timeout'));
    socket.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? 'error'));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().trim().replace(/^\+/, '')));
  });
}

export interface App {
  readonly name: string;
  readonly child: ChildProcess;
  output(): string;
  exited: Promise<void>;
  /** SIGTERM and wait (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/** Runs `node <dist>/apps/<app>/main.js` with only the given environment (no jest loader). */
export function startApp(dist: string, app: string, env: Record<string, string>): App {
  const child = spawn(process.execPath, [path.join(dist, 'apps', app, 'main.js')], {
    cwd: path.dirname(dist),
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-200_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name: app,
    child,
    output: () => out,
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(t);
    },
  };
}

/** Pids of a process's children (the launcher's apps), from /proc. */
export function childPids(pid: number): number[] {
  try {
    return fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((s) => s.length > 0)
      .map(Number);
  } catch {
    return [];
  }
}

export async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Answers that break the outage contract: a 5xx other than 503 REDIS_UNAVAILABLE with Retry-After, or slower than `boundMs`. */
export function violations(
  answers: readonly Answer[],
  boundMs: number,
  allowed: readonly string[] = ['REDIS_UNAVAILABLE'],
): Answer[] {
  return answers.filter((a) => {
    if (a.status === 0) return true;
    if (a.ms > boundMs) return true;
    if (a.status >= 500)
      return !(
        a.status === 503 &&
        a.errorCode !== undefined &&
        allowed.includes(a.errorCode) &&
        a.retryAfter !== undefined
      );
    return false;
  });
}
