/**
 * `npm start`: the whole service on one machine, compiled (run as dist/apps/launcher/main.js
 * after `npm run build`; `npm start` builds first when dist/ is stale). Finds Redis at REDIS_URL
 * or starts a local redis-server (AOF under .data/redis), then runs the apps of
 * {@link plannedApps} with `node` on their bundles, restarting any that crash, each alone (the
 * `API_PROCESSES` API processes are independent: they share `PORT` with reusePort).
 *
 * The devnet node (apps/devnet) runs first unless ARC_URL is set, and the other apps get
 * ARC_URL/HEADERS_URL = http://127.0.0.1:DEVNET_PORT; they start once it answers /liveness.
 *
 * Stop (Ctrl-C, SIGINT or SIGTERM): the apps first (SIGTERM; servers finish in-flight requests,
 * workers the jobs in hand; SIGKILL after SHUTDOWN_GRACE_MS + 2 s), then the devnet node, then
 * the redis-servers this launcher started (SIGTERM: they flush their AOF): the service's, when
 * REDIS_URL did not answer, and the devnet node's own (.data/devnet-redis, unless DEVNET_REDIS_URL
 * is set or no redis-server is on PATH). The devnet node and those redis-servers run in their own
 * process groups, so a terminal's Ctrl-C does not stop them under the apps.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { CONFIG_ERROR_EXIT, loadConfigOrExit, reusePortProblem } from '@proofline/shared-config';
import { redisTargetOf } from '@proofline/shared-redis';
import {
  hasRedisServer,
  holdsNothingUnder,
  isLocalUrl,
  redisAnswers,
  startLocalRedis,
  stopOrphanedRedisIn,
} from './redis-local';
import { bundlePath, copyEnv, plannedApps, profileArgs, restartDelayMs, stopChild } from './services';

/** dist/ (this file is dist/apps/launcher/main.js; `__dirname` compiles to dist/apps/launcher/src). */
const DIST = path.resolve(__dirname, '../../..');
/** The installation: package.json, node_modules, .data. */
const ROOT = path.dirname(DIST);

interface Proc {
  name: string;
  stage: 'infrastructure' | 'app';
  readyUrl?: string;
  entry: string;
  env: NodeJS.ProcessEnv;
  child?: ChildProcess;
  restarts: number[];
}

/** The launcher's own lines are at level info: LOG_LEVEL warn and above silences them. */
let quiet = false;

function log(message: string, fields: Record<string, unknown> = {}): void {
  if (quiet) return;
  console.log(
    JSON.stringify({ level: 'info', time: new Date().toISOString(), name: 'launcher', msg: message, ...fields }),
  );
}

async function main(): Promise<void> {
  const config = loadConfigOrExit('start');
  // Before anything starts: each API process would refuse this itself, once per copy.
  const problem = reusePortProblem(config.apiProcesses);
  if (problem) {
    console.error(`proofline start: configuration error: ${problem}`);
    process.exit(CONFIG_ERROR_EXIT);
  }
  quiet = ['warn', 'error', 'fatal', 'silent'].includes(config.logLevel);
  if (!fs.existsSync(path.join(DIST, '.build-stamp'))) {
    console.error(`proofline start: no compiled build at ${DIST} (run npm run build, or npm start which builds)`);
    process.exit(1);
  }

  let redis: ChildProcess | undefined;
  if (await redisAnswers(config.redisUrl)) {
    log(`using Redis at ${redact(config.redisUrl)}`);
  } else if (isLocalUrl(config.redisUrl) && hasRedisServer()) {
    const dataDir = path.join(ROOT, '.data', 'redis');
    log(
      `no Redis at ${redact(config.redisUrl)}; starting redis-server with AOF in ${path.relative(ROOT, dataDir) || dataDir}`,
    );
    redis = await startLocalRedis(config.redisUrl, dataDir);
    // Not reached on SIGKILL; on any other exit of the launcher the redis-server goes with it.
    process.on('exit', () => redis?.kill('SIGTERM'));
  } else {
    console.error(
      `proofline: Redis is not reachable at ${redact(config.redisUrl)} and no redis-server is on PATH to start one (install redis-server or set REDIS_URL).`,
    );
    process.exit(1);
  }

  const procs: Proc[] = plannedApps(config, process.env, DIST).flatMap((plan) =>
    Array.from({ length: plan.copies }, (_, i) => ({
      name: plan.copies > 1 ? `${plan.name}-${i + 1}` : plan.name,
      stage: plan.stage ?? 'app',
      ...(plan.readyUrl ? { readyUrl: plan.readyUrl } : {}),
      entry: bundlePath(DIST, plan.app),
      env: { ...process.env, ...plan.env, ...copyEnv(plan, i, process.env) },
      restarts: [],
    })),
  );
  // The devnet node keeps its chain (every transaction, UTXO and block of the simulated network)
  // in a redis-server of its own, as a real deployment's ARC keeps its own state: the service's
  // Redis then holds only the service's data (its memory per record is the service's figure),
  // and the chain's writes do not queue behind the service's commands.
  let devnetRedis: ChildProcess | undefined;
  const devnetProc = procs.find((p) => p.name === 'devnet');
  if (devnetProc && !process.env['DEVNET_REDIS_URL'] && hasRedisServer()) {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const dataDir = path.join(ROOT, '.data', 'devnet-redis');
    // A devnet chain belongs to the service data funded from it. A service Redis with nothing
    // under REDIS_PREFIX (first start, a benchmark's private server) gets a new chain: an old one
    // would only make its wallet scan thousands of spent coinbases from height 0.
    if (fs.existsSync(dataDir) && (await holdsNothingUnder(redisTargetOf(config), config.redisPrefix))) {
      log(
        `the service's Redis holds nothing under ${config.redisPrefix}: the devnet starts a new chain (${path.relative(ROOT, dataDir)} cleared)`,
      );
      // A server a killed launcher left on this directory goes first: its pid file goes with the directory.
      await stopOrphanedRedisIn(dataDir);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    log(`starting the devnet node's redis-server with AOF in ${path.relative(ROOT, dataDir)}`);
    devnetRedis = await startLocalRedis(url, dataDir);
    process.on('exit', () => devnetRedis?.kill('SIGTERM'));
    devnetProc.env = { ...devnetProc.env, DEVNET_REDIS_URL: url };
  }
  let stopping = false;
  // Not reached on SIGKILL (then the node stops itself: followLauncher); on any other exit of the launcher the devnet node goes with it.
  process.on('exit', () => procs.filter((p) => p.stage === 'infrastructure').forEach((p) => p.child?.kill('SIGTERM')));

  const run = (p: Proc) => {
    // The devnet node runs in its own process group (like the redis-server): a terminal's Ctrl-C
    // reaches the apps, and the launcher stops the node after them.
    const own = p.stage === 'infrastructure';
    // The IPC channel only tells the child when the launcher is gone, however it went (followLauncher).
    const child = spawn(process.execPath, [...profileArgs(p.name, process.env), p.entry], {
      cwd: ROOT,
      env: p.env,
      stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
      detached: own,
    });
    p.child = child;
    child.on('exit', (code, signal) => {
      p.child = undefined;
      if (stopping) return;
      if (code === CONFIG_ERROR_EXIT) {
        void stop(`${p.name} rejected the configuration`, CONFIG_ERROR_EXIT);
        return;
      }
      const now = Date.now();
      p.restarts = p.restarts.filter((t) => now - t < 60_000);
      if (p.restarts.length >= 5) {
        void stop(`${p.name} crashed 5 times within a minute`, 1);
        return;
      }
      const delay = restartDelayMs(p.restarts.length);
      p.restarts.push(now);
      log(`${p.name} exited (${signal ?? code}); restarting in ${delay} ms`);
      setTimeout(() => !stopping && run(p), delay);
    });
  };

  const stop = async (reason: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log(
      `stopping (${reason}): apps first, then the devnet if it runs here, then ${redis || devnetRedis ? 'the redis-servers started here' : 'nothing else'}`,
    );
    // The apps, then the infrastructure they use (the devnet node), then Redis.
    for (const stage of ['app', 'infrastructure'] as const) {
      const running = procs
        .filter((p) => p.stage === stage)
        .map((p) => p.child)
        .filter((c): c is ChildProcess => c !== undefined);
      await Promise.all(running.map((child) => stopChild(child, config.shutdownGraceMs + 2000)));
    }
    await Promise.all(
      [redis, devnetRedis].filter((r): r is ChildProcess => r !== undefined).map((r) => stopChild(r, 10_000)),
    );
    log('stopped');
    process.exit(exitCode);
  };

  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // The devnet node first: the apps publish to it from their first write.
  for (const p of procs.filter((x) => x.stage === 'infrastructure')) run(p);
  for (const p of procs.filter((x) => x.stage === 'infrastructure' && x.readyUrl)) {
    if (!(await answers(p.readyUrl ?? '', 30_000, () => stopping)))
      log(`${p.name} did not answer ${p.readyUrl} within 30 s; starting the apps anyway`);
  }
  if (stopping) return;
  for (const p of procs.filter((x) => x.stage === 'app')) run(p);
  log('started', { processes: procs.map((p) => p.name) });

  void announceWhenReady(`http://127.0.0.1:${config.port}`, config.graphqlPort, () => stopping);
}

/** A TCP port free on 127.0.0.1 now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers 2xx (true) or `timeoutMs` passes (false). */
async function answers(url: string, timeoutMs: number, stopping: () => boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !stopping()) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(1000) })).ok) return true;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

async function announceWhenReady(api: string, graphqlPort: number, stopping: () => boolean): Promise<void> {
  const started = Date.now();
  for (let i = 0; i < 600 && !stopping(); i += 1) {
    try {
      const res = await fetch(`${api}/readiness`);
      if (res.ok) {
        log(
          `ready: REST ${api}/api/v1 (docs ${api}/api/v1/docs), GraphQL http://127.0.0.1:${graphqlPort}/graphql; an admin key: npm run cli -- keys bootstrap`,
          {
            readyAfterMs: Date.now() - started,
          },
        );
        return;
      }
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!stopping())
    console.log(
      JSON.stringify({
        level: 'warn',
        time: new Date().toISOString(),
        name: 'launcher',
        msg: 'not ready after 60 s: check the lines above',
      }),
    );
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

main().catch((err: unknown) => {
  console.error(`proofline: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
