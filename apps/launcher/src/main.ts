/**
 * `npm start`: the whole service on one machine. Finds Redis at REDIS_URL or starts a local
 * redis-server (AOF under .data/redis), then runs the API, the GraphQL app and WORKERS worker
 * processes, restarting any that crash. Ctrl-C (SIGINT) or SIGTERM stops everything cleanly:
 * servers finish in-flight requests, workers finish the jobs in hand, Redis flushes its AOF.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { CONFIG_ERROR_EXIT, loadConfigOrExit } from '@proofline/shared-config';
import { hasRedisServer, isLocalUrl, redisAnswers, startLocalRedis } from './redis-local';

const ROOT = path.resolve(__dirname, '../../..');

interface Service {
  name: string;
  entry: string;
  child?: ChildProcess;
  restarts: number[];
}

function log(message: string): void {
  console.log(JSON.stringify({ level: 'info', time: new Date().toISOString(), name: 'launcher', msg: message }));
}

async function main(): Promise<void> {
  const config = loadConfigOrExit('start');

  let redis: ChildProcess | undefined;
  if (await redisAnswers(config.redisUrl)) {
    log(`using Redis at ${redact(config.redisUrl)}`);
  } else if (isLocalUrl(config.redisUrl) && hasRedisServer()) {
    const dataDir = path.join(ROOT, '.data', 'redis');
    log(`no Redis at ${redact(config.redisUrl)}; starting redis-server with AOF in ${path.relative(ROOT, dataDir)}`);
    redis = await startLocalRedis(config.redisUrl, dataDir);
  } else {
    console.error(`proofline: Redis is not reachable at ${redact(config.redisUrl)} and no redis-server is on PATH to start one (install redis-server or set REDIS_URL).`);
    process.exit(1);
  }

  const services: Service[] = [
    { name: 'api', entry: 'apps/api/src/main.ts', restarts: [] },
    { name: 'graphql', entry: 'apps/graphql/src/main.ts', restarts: [] },
    ...Array.from({ length: config.workers }, (_, i) => ({ name: `worker-${i + 1}`, entry: 'apps/worker/src/main.ts', restarts: [] })),
  ];
  let stopping = false;

  const run = (svc: Service) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, svc.entry)], {
      cwd: ROOT,
      env: process.env,
      stdio: 'inherit',
    });
    svc.child = child;
    child.on('exit', (code, signal) => {
      svc.child = undefined;
      if (stopping) return;
      if (code === CONFIG_ERROR_EXIT) {
        void stop(`${svc.name} rejected the configuration`, 1);
        return;
      }
      const now = Date.now();
      svc.restarts = svc.restarts.filter((t) => now - t < 60_000);
      if (svc.restarts.length >= 5) {
        void stop(`${svc.name} crashed 5 times within a minute`, 1);
        return;
      }
      svc.restarts.push(now);
      log(`${svc.name} exited (${signal ?? code}); restarting in 1 s`);
      setTimeout(() => !stopping && run(svc), 1000);
    });
  };

  const stop = async (reason: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log(`stopping (${reason})`);
    const running = services.map((s) => s.child).filter((c): c is ChildProcess => c !== undefined);
    await Promise.all(
      running.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
            setTimeout(() => {
              child.kill('SIGKILL');
              resolve();
            }, config.shutdownGraceMs + 2000).unref();
          }),
      ),
    );
    if (redis && redis.exitCode === null) {
      await new Promise<void>((resolve) => {
        redis?.once('exit', () => resolve());
        redis?.kill('SIGTERM');
        setTimeout(resolve, 5000).unref();
      });
    }
    log('stopped');
    process.exit(exitCode);
  };

  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  for (const svc of services) run(svc);

  void announceWhenReady(`http://127.0.0.1:${config.port}`, config.graphqlPort);
}

async function announceWhenReady(api: string, graphqlPort: number): Promise<void> {
  for (let i = 0; i < 120; i += 1) {
    try {
      const res = await fetch(`${api}/readiness`);
      if (res.ok) {
        log(`ready: REST ${api}/api/v1 (docs ${api}/api/v1/docs), GraphQL http://127.0.0.1:${graphqlPort}/graphql; an admin key: npm run cli -- keys bootstrap`);
        return;
      }
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  log('not ready after 60 s: check the lines above');
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
